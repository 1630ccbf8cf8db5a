package dev.skein.broker.controller;

import dev.skein.broker.config.DynamicBrokerConfigs;
import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DynamicBrokerConfigsTest {
    private static final String FOLLOWER_RATE = "follower.replication.throttled.rate";
    private static final String LEADER_RATE = "leader.replication.throttled.rate";

    @Test
    void throttleRatesAreTheOnlyDynamicBrokerConfigs() {
        DynamicBrokerConfigs.validate(Map.of(FOLLOWER_RATE, "1048576", LEADER_RATE, "1"));
        assertThatThrownBy(() -> DynamicBrokerConfigs.validate(Map.of("log.retention.ms", "1000", FOLLOWER_RATE, "5")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("Cannot update these configs dynamically: [log.retention.ms]");
        assertThatThrownBy(() -> DynamicBrokerConfigs.validate(Map.of("no.such.config", "1")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("no.such.config");
    }

    @Test
    void ratesMustBePositiveLongs() {
        assertThatThrownBy(() -> DynamicBrokerConfigs.validate(Map.of(FOLLOWER_RATE, "0")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining(FOLLOWER_RATE);
        assertThatThrownBy(() -> DynamicBrokerConfigs.validate(Map.of(LEADER_RATE, "fast")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("fast");
    }

    @Test
    void resourceIsABrokerIdOrTheDefault() {
        DynamicBrokerConfigs.validateResource("");
        DynamicBrokerConfigs.validateResource("3");
        assertThatThrownBy(() -> DynamicBrokerConfigs.validateResource("broker-3")).isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void brokerOverrideWinsOverClusterDefault() {
        MetadataState s = MetadataState.EMPTY.apply(List.of(
                new MetadataCommand.AlterBrokerConfigs("", Map.of(FOLLOWER_RATE, "100", LEADER_RATE, "200")),
                new MetadataCommand.AlterBrokerConfigs("1", Map.of(FOLLOWER_RATE, "10"))), 1).state();
        ClusterImage image = s.toImage("c", 0);
        assertThat(image.dynamicBrokerConfig(1, FOLLOWER_RATE)).isEqualTo("10");
        assertThat(image.dynamicBrokerConfig(1, LEADER_RATE)).isEqualTo("200");
        assertThat(image.dynamicBrokerConfig(2, FOLLOWER_RATE)).isEqualTo("100");

        MetadataState cleared = s.apply(List.of(new MetadataCommand.AlterBrokerConfigs("1", Map.of())), 2).state();
        assertThat(cleared.brokerConfigs()).containsOnlyKeys("");
    }

    @Test
    void commandAndSnapshotRoundTrip() {
        MetadataCommand c = new MetadataCommand.AlterBrokerConfigs("2", Map.of(FOLLOWER_RATE, "1048576"));
        assertThat(MetadataCodec.decodeBatch(MetadataCodec.encodeBatch(List.of(c)))).containsExactly(c);

        MetadataState s = MetadataState.EMPTY.apply(List.of(c), 1).state();
        assertThat(MetadataCodec.decodeState(MetadataCodec.encodeState(s)).brokerConfigs())
                .isEqualTo(Map.of("2", Map.of(FOLLOWER_RATE, "1048576")));
    }

    @Test
    void snapshotWithoutBrokerConfigSectionStillReads() {
        byte[] full = MetadataCodec.encodeState(MetadataState.EMPTY);
        byte[] old = java.util.Arrays.copyOf(full, full.length - 4); // drop the trailing count
        assertThat(MetadataCodec.decodeState(old).brokerConfigs()).isEmpty();
    }

    @Test
    void throttledReplicasAcceptStarOrPartitionBrokerPairs() {
        TopicConfigs.validate(Map.of(TopicConfigs.FOLLOWER_REPLICATION_THROTTLED_REPLICAS, "*"));
        TopicConfigs.validate(Map.of(TopicConfigs.LEADER_REPLICATION_THROTTLED_REPLICAS, "0:1,1:2"));
        assertThatThrownBy(() -> TopicConfigs.validate(Map.of(TopicConfigs.LEADER_REPLICATION_THROTTLED_REPLICAS, "0-1")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("[partitionId]:[brokerId]");
        Map<String, String> configs = Map.of(TopicConfigs.LEADER_REPLICATION_THROTTLED_REPLICAS, "0:1, 1:2");
        assertThat(TopicConfigs.throttledReplica(configs, TopicConfigs.LEADER_REPLICATION_THROTTLED_REPLICAS, 1, 2)).isTrue();
        assertThat(TopicConfigs.throttledReplica(configs, TopicConfigs.LEADER_REPLICATION_THROTTLED_REPLICAS, 1, 1)).isFalse();
        assertThat(TopicConfigs.throttledReplica(configs, TopicConfigs.FOLLOWER_REPLICATION_THROTTLED_REPLICAS, 0, 1)).isFalse();
    }
}
