package dev.skein.broker.metadata;

import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One topic as the cluster metadata knows it: name, immutable id, its partitions' registrations
 * (index = partition number) and the topic's config overrides (only the keys set on the topic;
 * defaults come from the broker).
 */
public record TopicMetadata(String name, Uuid id, List<PartitionRegistration> partitions, Map<String, String> configs) {
    public TopicMetadata {
        partitions = List.copyOf(partitions);
        configs = Map.copyOf(configs);
    }

    public int partitionCount() {
        return partitions.size();
    }

    public PartitionRegistration partition(int index) {
        return index >= 0 && index < partitions.size() ? partitions.get(index) : null;
    }

    public boolean isInternal() {
        return Topics.isInternal(name);
    }

    public TopicMetadata withPartitions(List<PartitionRegistration> newPartitions) {
        return new TopicMetadata(name, id, newPartitions, configs);
    }

    /** Adds partitions up to {@code count}, each placed on the given replicas. */
    public TopicMetadata withMorePartitions(List<List<Integer>> newReplicas) {
        List<PartitionRegistration> all = new ArrayList<>(partitions);
        newReplicas.forEach(r -> all.add(PartitionRegistration.of(r)));
        return withPartitions(all);
    }

    public TopicMetadata withPartition(int index, PartitionRegistration registration) {
        List<PartitionRegistration> all = new ArrayList<>(partitions);
        all.set(index, registration);
        return withPartitions(all);
    }

    public TopicMetadata withConfigs(Map<String, String> newConfigs) {
        return new TopicMetadata(name, id, partitions, newConfigs);
    }
}
