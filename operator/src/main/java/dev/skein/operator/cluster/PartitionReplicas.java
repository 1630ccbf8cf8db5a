package dev.skein.operator.cluster;

import java.util.List;

/** One partition as the rolling-update gate sees it: its replicas, in-sync replicas and min.insync.replicas. */
public record PartitionReplicas(String topic, int partition, List<Integer> replicas, List<Integer> isr,
                                int minInSyncReplicas) {
    public PartitionReplicas {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
