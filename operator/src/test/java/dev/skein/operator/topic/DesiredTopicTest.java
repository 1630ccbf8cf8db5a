package dev.skein.operator.topic;

import dev.skein.operator.model.SkeinTopic;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class DesiredTopicTest {

    private static SkeinTopic parse(String yaml) {
        return Serialization.unmarshal(yaml, SkeinTopic.class);
    }

    @Test
    void topicNameDefaultsToTheResourceNameAndMinIsrBecomesATopicConfig() {
        SkeinTopic topic = parse("""
                apiVersion: skein.dev/v1alpha1
                kind: SkeinTopic
                metadata: {name: orders, namespace: shop}
                spec:
                  cluster: main
                  partitions: 12
                  replicationFactor: 3
                  minInSyncReplicas: 2
                  config: {retention.ms: "86400000"}
                """);

        assertThat(DesiredTopic.of(topic)).isEqualTo(new DesiredTopic("orders", 12, 3,
                Map.of("min.insync.replicas", "2", "retention.ms", "86400000")));
    }

    @Test
    void explicitTopicNameWinsAndAbsentConfigIsEmpty() {
        SkeinTopic topic = parse("""
                apiVersion: skein.dev/v1alpha1
                kind: SkeinTopic
                metadata: {name: orders-v2, namespace: shop}
                spec: {cluster: main, topicName: Orders_V2, partitions: 1, replicationFactor: 1}
                """);

        assertThat(DesiredTopic.of(topic)).isEqualTo(new DesiredTopic("Orders_V2", 1, 1, Map.of()));
    }
}
