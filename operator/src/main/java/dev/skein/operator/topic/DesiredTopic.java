package dev.skein.operator.topic;

import dev.skein.operator.model.SkeinTopic;
import dev.skein.operator.model.SkeinTopicSpec;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A topic as a {@link SkeinTopic} asks for it: name, partition count, replication factor and the
 * configs to set explicitly ({@code spec.config} plus {@code min.insync.replicas} when given).
 */
public record DesiredTopic(String name, int partitions, int replicationFactor, Map<String, String> configs) {
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

    public DesiredTopic {
        Objects.requireNonNull(name, "name");
        configs = Map.copyOf(configs);
    }

    /** The desired topic of a resource; the spec's required fields must be present (the CRD enforces it). */
    public static DesiredTopic of(SkeinTopic topic) {
        SkeinTopicSpec spec = topic.getSpec();
        Map<String, String> configs = new TreeMap<>(spec.getConfig() == null ? Map.of() : spec.getConfig());
        if (spec.getMinInSyncReplicas() != null) {
            configs.put(MIN_INSYNC_REPLICAS, Integer.toString(spec.getMinInSyncReplicas()));
        }
        return new DesiredTopic(topic.topicName(), spec.getPartitions(), spec.getReplicationFactor(), configs);
    }
}
