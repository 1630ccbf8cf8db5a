package dev.skein.broker.config;

import dev.skein.broker.replication.ReplicationConfig;
import dev.skein.broker.storage.LogConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BrokerConfigTest {

    private static Map<String, String> kafkaCombinedModeFile() throws Exception {
        Properties p = new Properties();
        try (InputStream in = BrokerConfigTest.class.getResourceAsStream("/kafka-kraft-combined.properties")) {
            p.load(in);
        }
        Map<String, String> m = new HashMap<>();
        p.stringPropertyNames().forEach(k -> m.put(k, p.getProperty(k)));
        return m;
    }

    @Test
    void kafkaKraftCombinedModeFileIsAcceptedUnchanged() throws Exception {
        BrokerConfig c = new BrokerConfig(kafkaCombinedModeFile());
        assertThat(c.nodeId()).isEqualTo(1);
        assertThat(c.brokerListener()).isEqualTo(new BrokerConfig.Listener("PLAINTEXT", "", 9092));
        assertThat(c.advertisedListener(9092)).isEqualTo(new BrokerConfig.Listener("PLAINTEXT", "localhost", 9092));
        assertThat(c.logDirs()).containsExactly(Path.of("/tmp/kraft-combined-logs"));
        assertThat(c.socketRequestMaxBytes()).isEqualTo(104857600);
        assertThat(c.socketSendBufferBytes()).isEqualTo(102400);
        assertThat(c.socketReceiveBufferBytes()).isEqualTo(102400);
        // keys Kafka has and Skein does not use are reported, not fatal
        assertThat(c.ignoredKeys()).contains("num.recovery.threads.per.data.dir",
                "transaction.state.log.min.isr", "share.coordinator.state.topic.replication.factor");
        assertThat(c.ignoredKeys()).doesNotContain("node.id", "listeners", "log.dirs", "log.retention.hours",
                "socket.send.buffer.bytes", "socket.receive.buffer.bytes");
    }

    @Test
    void badValueFailsWithTheKeyAndTheValue() {
        Map<String, String> p = new HashMap<>(Map.of("node.id", "1", "log.dirs", "/tmp/x", "num.partitions", "zero"));
        assertThatThrownBy(() -> new BrokerConfig(p))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("num.partitions").hasMessageContaining("zero");
        p.put("num.partitions", "0");
        assertThatThrownBy(() -> new BrokerConfig(p))
                .isInstanceOf(ConfigException.class).hasMessageContaining("num.partitions");
    }

    @Test
    void socketBuffersTakeKafkasDefaultsMinusOneOrASize() {
        Map<String, String> p = new HashMap<>(Map.of("node.id", "1", "log.dirs", "/tmp/x"));
        BrokerConfig defaults = new BrokerConfig(p);
        assertThat(defaults.socketSendBufferBytes()).isEqualTo(100 * 1024);
        assertThat(defaults.socketReceiveBufferBytes()).isEqualTo(100 * 1024);
        assertThat(ReplicationConfig.from(defaults).socketReceiveBufferBytes()).isEqualTo(64 * 1024);
        p.put("socket.send.buffer.bytes", "-1");
        p.put("replica.socket.receive.buffer.bytes", "1048576");
        assertThat(new BrokerConfig(p).socketSendBufferBytes()).isEqualTo(-1);
        assertThat(ReplicationConfig.from(new BrokerConfig(p)).socketReceiveBufferBytes()).isEqualTo(1 << 20);
        for (String bad : new String[] {"0", "-2"}) {
            p.put("socket.receive.buffer.bytes", bad);
            assertThatThrownBy(() -> new BrokerConfig(p))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("socket.receive.buffer.bytes").hasMessageContaining(bad)
                    .hasMessageContaining("-1 (the operating system's default)");
        }
    }

    @Test
    void missingNodeIdIsRejected() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("log.dirs", "/tmp/x")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("node.id");
    }

    @Test
    void nonPlaintextListenerIsRejectedWithTheReason() {
        Map<String, String> p = Map.of("node.id", "1", "log.dirs", "/tmp/x",
                "listeners", "SSL://:9093", "controller.listener.names", "CONTROLLER");
        assertThatThrownBy(() -> new BrokerConfig(p))
                .isInstanceOf(ConfigException.class).hasMessageContaining("PLAINTEXT only");
    }

    @Test
    void retentionFollowsKafkasPrecedenceOfMsOverMinutesOverHours() {
        Map<String, String> p = new HashMap<>(Map.of("node.id", "1", "log.dirs", "/tmp/x", "log.retention.hours", "2"));
        assertThat(new BrokerConfig(p).topicConfigDefaults()).containsEntry("retention.ms", "7200000");
        p.put("log.retention.minutes", "3");
        assertThat(new BrokerConfig(p).topicConfigDefaults()).containsEntry("retention.ms", "180000");
        p.put("log.retention.ms", "-5");
        assertThat(new BrokerConfig(p).topicConfigDefaults()).containsEntry("retention.ms", "-1");
    }

    @Test
    void topicOverridesMergeOverBrokerDefaults() {
        BrokerConfig c = new BrokerConfig(Map.of("node.id", "1", "log.dirs", "/tmp/x",
                "log.segment.bytes", "1048576", "log.cleanup.policy", "compact"));
        LogConfig lc = TopicConfigs.toLogConfig(c.topicConfigDefaults(), Map.of("retention.bytes", "5000"));
        assertThat(lc.segmentBytes()).isEqualTo(1048576);
        assertThat(lc.cleanupCompact()).isTrue();
        assertThat(lc.cleanupDelete()).isFalse();
        assertThat(lc.retentionBytes()).isEqualTo(5000);
        LogConfig both = TopicConfigs.toLogConfig(c.topicConfigDefaults(), Map.of("cleanup.policy", "compact,delete"));
        assertThat(both.cleanupCompact()).isTrue();
        assertThat(both.cleanupDelete()).isTrue();
    }

    @Test
    void invalidTopicConfigsNameTheProblem() {
        assertThatThrownBy(() -> TopicConfigs.validate(Map.of("retention.mss", "1")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("retention.mss");
        assertThatThrownBy(() -> TopicConfigs.validate(Map.of("segment.bytes", "10")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("segment.bytes");
        assertThatThrownBy(() -> TopicConfigs.validate(Map.of("cleanup.policy", "shred")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("cleanup.policy");
        TopicConfigs.validate(Map.of("cleanup.policy", "compact,delete", "min.insync.replicas", "2"));
    }

    @Test
    void listenersParseHostsAndPorts() {
        BrokerConfig c = new BrokerConfig(Map.of("node.id", "3", "log.dirs", "/a,/b",
                "listeners", "PLAINTEXT://0.0.0.0:19092,CONTROLLER://[::1]:19093"));
        assertThat(c.listeners()).containsExactly(new BrokerConfig.Listener("PLAINTEXT", "0.0.0.0", 19092),
                new BrokerConfig.Listener("CONTROLLER", "::1", 19093));
        assertThat(c.advertisedListener(19092).host()).isEqualTo("localhost");
        assertThat(c.logDirs()).isEqualTo(List.of(Path.of("/a"), Path.of("/b")));
    }
}
