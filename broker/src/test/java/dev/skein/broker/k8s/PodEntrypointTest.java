package dev.skein.broker.k8s;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PodEntrypointTest {
    @TempDir
    Path config;

    private Map<String, String> env(String hostname) {
        Map<String, String> env = new HashMap<>();
        env.put("HOSTNAME", hostname);
        env.put("SKEIN_CONFIG_DIR", config.toString());
        return env;
    }

    private void nodeFile(int id, String text) throws IOException {
        Files.writeString(config.resolve("node-" + id + ".properties"), text);
    }

    @ParameterizedTest
    @CsvSource({"main-broker-0, 0", "main-broker-2, 2", "a-17, 17", "my-cluster-broker-3.my-cluster-brokers.ns.svc, 3"})
    void ordinalIsTheNumberAfterTheLastDash(String hostname, int ordinal) {
        assertThat(PodEntrypoint.ordinal(hostname)).isEqualTo(ordinal);
    }

    @ParameterizedTest
    @ValueSource(strings = {"broker", "broker-x", "-1", "broker-01", "Broker-1", "broker--", "broker-1a"})
    void hostnameWithoutAnOrdinalIsRefusedNamingIt(String hostname) {
        assertThatThrownBy(() -> PodEntrypoint.ordinal(hostname)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("HOSTNAME '" + hostname + "' is not <statefulset>-<ordinal>");
    }

    @Test
    void missingHostnameIsRefused() {
        assertThatThrownBy(() -> PodEntrypoint.ordinal(null)).hasMessageStartingWith("HOSTNAME is not set");
    }

    @Test
    void propertiesAreThePodsConfigMapFileWithTheOrdinalAsNodeId() throws IOException {
        nodeFile(1, "node.id=1\nprocess.roles=broker,controller\nlog.dirs=/var/lib/skein/data\n");
        nodeFile(2, "node.id=2\nprocess.roles=broker\n");

        Map<String, String> props = PodEntrypoint.serverProperties(env("main-broker-1"));

        assertThat(props).containsExactlyInAnyOrderEntriesOf(Map.of("node.id", "1",
                "process.roles", "broker,controller", "log.dirs", "/var/lib/skein/data"));
    }

    @Test
    void environmentOverridesKeysWithKafkasNamingAndExpandsVariables() throws IOException {
        nodeFile(0, "node.id=0\nlog.retention.ms=1000\n");
        Map<String, String> env = env("main-broker-0");
        env.put("SKEIN_CFG_LOG_RETENTION_MS", "604800000");
        env.put("SKEIN_CFG_ADVERTISED_LISTENERS", "PLAINTEXT://${POD_IP}:9092");
        env.put("SKEIN_CFG_SKEIN__CUSTOM___KEY", "x");
        env.put("POD_IP", "10.1.2.3");
        env.put("SKEIN_NODE_ID", "0");

        Map<String, String> props = PodEntrypoint.serverProperties(env);

        assertThat(props).containsEntry("log.retention.ms", "604800000")
                .containsEntry("advertised.listeners", "PLAINTEXT://10.1.2.3:9092")
                .containsEntry("skein_custom-key", "x").containsEntry("node.id", "0");
    }

    @Test
    void missingFileSaysWhichFileAndWhatIsThere() throws IOException {
        nodeFile(0, "node.id=0\n");
        nodeFile(1, "node.id=1\n");

        assertThatThrownBy(() -> PodEntrypoint.serverProperties(env("main-broker-3")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no " + config.resolve("node-3.properties") + " for node.id 3")
                .hasMessageContaining("has node-0.properties, node-1.properties")
                .hasMessageContaining("ConfigMap mounted");
    }

    @Test
    void unmountedConfigDirectoryIsNamed() {
        Map<String, String> env = env("main-broker-0");
        env.put("SKEIN_CONFIG_DIR", config.resolve("absent").toString());
        assertThatThrownBy(() -> PodEntrypoint.serverProperties(env))
                .hasMessageContaining(config.resolve("absent") + " does not exist");
    }

    @Test
    void fileForAnotherNodeIsRefused() throws IOException {
        nodeFile(1, "node.id=2\n");
        assertThatThrownBy(() -> PodEntrypoint.serverProperties(env("main-broker-1")))
                .hasMessageContaining("says node.id=2 but this pod (HOSTNAME main-broker-1) is node 1");
    }

    @Test
    void nodeIdFromThePodIndexLabelMustAgreeWithTheHostname() throws IOException {
        nodeFile(1, "node.id=1\n");
        Map<String, String> env = env("main-broker-1");
        env.put("SKEIN_NODE_ID", "2");
        assertThatThrownBy(() -> PodEntrypoint.serverProperties(env))
                .hasMessageContaining("SKEIN_NODE_ID=2 but HOSTNAME main-broker-1 has ordinal 1");
    }

    @Test
    void nodeIdCannotBeOverriddenAndUnsetVariablesAreNamed() throws IOException {
        nodeFile(0, "node.id=0\nadvertised.listeners=PLAINTEXT://${POD_IP}:9092\n");
        Map<String, String> env = env("main-broker-0");
        assertThatThrownBy(() -> PodEntrypoint.serverProperties(env))
                .hasMessageContaining("advertised.listeners=PLAINTEXT://${POD_IP}:9092 names ${POD_IP}, which is not set");
        env.put("POD_IP", "10.0.0.1");
        env.put("SKEIN_CFG_NODE_ID", "5");
        assertThatThrownBy(() -> PodEntrypoint.serverProperties(env))
                .hasMessageContaining("SKEIN_CFG_NODE_ID: node.id is the pod's ordinal and cannot be set");
    }

    @Test
    void renderedFileReadsBackAsTheSameProperties() throws IOException {
        Map<String, String> props = Map.of("node.id", "0", "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "odd key", "a=b:c\\d", "unicode", "é");
        Properties back = new Properties();
        back.load(new StringReader(PodEntrypoint.render(props)));
        assertThat(back).containsExactlyInAnyOrderEntriesOf(Map.of("node.id", "0",
                "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", "odd key", "a=b:c\\d", "unicode", "é"));
    }
}
