package dev.skein.broker.metadata;

import java.util.List;

/**
 * One partition's placement and leadership as the controller decided it: the replicas (in
 * preference order, the first is the preferred leader), the in-sync replicas, the leader and its
 * epoch, and the partition epoch that guards every change of the ISR (compare-and-set), plus the
 * replicas being added or removed by a reassignment.
 *
 * @param leader          broker id of the leader, or {@link #NO_LEADER}
 * @param leaderEpoch     incremented on every leader change; stamped into the batches the leader writes
 * @param partitionEpoch  incremented on every change of this registration
 */
public record PartitionRegistration(List<Integer> replicas, List<Integer> isr, int leader, int leaderEpoch,
                                    int partitionEpoch, List<Integer> addingReplicas, List<Integer> removingReplicas) {
    public static final int NO_LEADER = -1;

    public PartitionRegistration {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
        addingReplicas = List.copyOf(addingReplicas);
        removingReplicas = List.copyOf(removingReplicas);
    }

    /** A new partition led by the first replica, with every replica in sync. */
    public static PartitionRegistration of(List<Integer> replicas) {
        return new PartitionRegistration(replicas, replicas, replicas.getFirst(), 0, 0, List.of(), List.of());
    }

    public boolean hasLeader() {
        return leader != NO_LEADER;
    }

    public boolean isReplica(int brokerId) {
        return replicas.contains(brokerId);
    }

    public boolean isInSync(int brokerId) {
        return isr.contains(brokerId);
    }

    public PartitionRegistration withLeader(int newLeader, List<Integer> newIsr) {
        return new PartitionRegistration(replicas, newIsr, newLeader, leaderEpoch + 1, partitionEpoch + 1,
                addingReplicas, removingReplicas);
    }

    public PartitionRegistration withIsr(List<Integer> newIsr) {
        return new PartitionRegistration(replicas, newIsr, leader, leaderEpoch, partitionEpoch + 1,
                addingReplicas, removingReplicas);
    }
}
