package dev.skein.broker.config;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigProvidersTest {

    private static Map<String, String> base() {
        return new HashMap<>(Map.of("node.id", "1", "log.dirs", "/tmp/x"));
    }

    @Test
    void anEnvironmentVariableBecomesTheRackAsWithKafkasEnvVarConfigProvider() {
        Map<String, String> p = base();
        p.put("config.providers", "env");
        p.put("config.providers.env.class", "org.apache.kafka.common.config.provider.EnvVarConfigProvider");
        p.put("broker.rack", "${env:PATH}");

        BrokerConfig config = new BrokerConfig(p);

        assertThat(config.rack()).isEqualTo(System.getenv("PATH").strip());
        assertThat(config.ignoredKeys()).as("provider keys are not reported as unused").isEmpty();
    }

    @Test
    void aFileProviderResolvesItsKeyAndOtherValuesStayAsTheyAre(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rack.properties");
        Files.writeString(file, "zone=zone-b\n");
        Map<String, String> p = base();
        p.put("config.providers", " file ");
        p.put("config.providers.file.class", "org.apache.kafka.common.config.provider.FileConfigProvider");
        p.put("broker.rack", "${file:" + file + ":zone}");
        p.put("num.partitions", "3");

        BrokerConfig config = new BrokerConfig(p);

        assertThat(config.rack()).isEqualTo("zone-b");
        assertThat(config.numPartitions()).isEqualTo(3);
        assertThat(config.originals()).containsEntry("broker.rack", "zone-b");
    }

    @Test
    void withoutProvidersAPlaceholderIsKeptAsWritten() {
        Map<String, String> p = base();
        p.put("broker.rack", "${env:SKEIN_RACK}");
        assertThat(new BrokerConfig(p).rack()).isEqualTo("${env:SKEIN_RACK}");
    }

    @Test
    void anEmptyRackIsNoRack() {
        Map<String, String> p = base();
        p.put("broker.rack", " ");
        assertThat(new BrokerConfig(p).rack()).isNull();
    }

    @Test
    void aProviderWithoutAClassOrWithAWrongOneIsRejectedByName() {
        Map<String, String> p = base();
        p.put("config.providers", "env");
        assertThatThrownBy(() -> new BrokerConfig(p)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("config.providers.env.class").hasMessageContaining("has no class");
        p.put("config.providers.env.class", "java.lang.String");
        assertThatThrownBy(() -> new BrokerConfig(p)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("java.lang.String").hasMessageContaining("is not a");
        p.put("config.providers.env.class", "com.example.Missing");
        assertThatThrownBy(() -> new BrokerConfig(p)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("com.example.Missing").hasMessageContaining("cannot be instantiated");
    }
}
