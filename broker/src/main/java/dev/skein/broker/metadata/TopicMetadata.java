package dev.skein.broker.metadata;

import org.apache.kafka.common.Uuid;

import java.util.Map;

/**
 * One topic as the cluster metadata knows it: name, immutable id, partition count and the topic's
 * config overrides (only the keys set on the topic; defaults come from the broker).
 */
public record TopicMetadata(String name, Uuid id, int partitionCount, Map<String, String> configs) {
    public TopicMetadata {
        configs = Map.copyOf(configs);
    }

    public boolean isInternal() {
        return Topics.isInternal(name);
    }

    public TopicMetadata withPartitionCount(int count) {
        return new TopicMetadata(name, id, count, configs);
    }

    public TopicMetadata withConfigs(Map<String, String> newConfigs) {
        return new TopicMetadata(name, id, partitionCount, newConfigs);
    }
}
