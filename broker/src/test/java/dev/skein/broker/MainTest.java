package dev.skein.broker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MainTest {
    @Test
    void propertiesFileWithOverrides(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("server.properties"), "node.id=4\nnum.partitions=3\n");
        assertThat(Main.parseArgs(new String[]{file.toString(), "--override", "num.partitions=6"}, Map.of()))
                .containsEntry("node.id", "4").containsEntry("num.partitions", "6");
    }

    @Test
    void podModeReadsThePodsConfigMapFileAndTakesOverrides(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("node-2.properties"), "node.id=2\nnum.partitions=3\n");
        Map<String, String> env = Map.of("HOSTNAME", "main-broker-2", "SKEIN_CONFIG_DIR", dir.toString());
        assertThat(Main.parseArgs(new String[]{"--pod", "--override", "num.partitions=6"}, env))
                .containsEntry("node.id", "2").containsEntry("num.partitions", "6");
    }

    @Test
    void podModeOutsideAStatefulSetPodSaysSo(@TempDir Path dir) {
        Map<String, String> env = Map.of("HOSTNAME", "laptop", "SKEIN_CONFIG_DIR", dir.toString());
        assertThatThrownBy(() -> Main.parseArgs(new String[]{"--pod"}, env))
                .hasMessageContaining("HOSTNAME 'laptop' is not <statefulset>-<ordinal>");
    }

    @Test
    void dnsAnswersAreTrustedForSecondsUnlessTheOperatorSaidOtherwise() {
        String before = System.getProperty(Main.DNS_CACHE_TTL);
        try {
            System.clearProperty(Main.DNS_CACHE_TTL);
            Main.cacheDnsBriefly();
            assertThat(System.getProperty(Main.DNS_CACHE_TTL)).as("gRPC's resolver").isEqualTo("5");
            assertThat(java.security.Security.getProperty(Main.DNS_CACHE_TTL)).as("the JVM's cache").isNotNull();

            System.setProperty(Main.DNS_CACHE_TTL, "60");
            Main.cacheDnsBriefly();
            assertThat(System.getProperty(Main.DNS_CACHE_TTL)).isEqualTo("60");
        } finally {
            if (before == null) {
                System.clearProperty(Main.DNS_CACHE_TTL);
            } else {
                System.setProperty(Main.DNS_CACHE_TTL, before);
            }
        }
    }
}
