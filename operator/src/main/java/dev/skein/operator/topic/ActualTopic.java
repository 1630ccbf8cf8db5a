package dev.skein.operator.topic;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A topic as the cluster has it: its id, the replicas and ISR of each partition, and the configs
 * set on the topic itself (source DYNAMIC_TOPIC_CONFIG; defaults inherited from the broker are not
 * in it).
 */
public record ActualTopic(String name, String topicId, SortedMap<Integer, List<Integer>> replicas,
                          SortedMap<Integer, List<Integer>> isr, Map<String, String> configs) {

    public ActualTopic {
        replicas = new TreeMap<>(replicas);
        isr = new TreeMap<>(isr);
        configs = Map.copyOf(configs);
    }

    public int partitions() {
        return replicas.size();
    }

    /** The replication factor: the replica count of partition 0 (all partitions have the same unless reassigned). */
    public int replicationFactor() {
        return replicas.isEmpty() ? 0 : replicas.get(replicas.firstKey()).size();
    }

    /** Partitions whose ISR is smaller than their replica set. */
    public int underReplicatedPartitions() {
        int n = 0;
        for (Map.Entry<Integer, List<Integer>> e : replicas.entrySet()) {
            if (isr.getOrDefault(e.getKey(), List.of()).size() < e.getValue().size()) {
                n++;
            }
        }
        return n;
    }
}
