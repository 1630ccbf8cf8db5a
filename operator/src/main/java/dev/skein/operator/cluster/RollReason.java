package dev.skein.operator.cluster;

/** Why a rolling update waits: the {@code reason} of the cluster's Progressing/Degraded condition. */
public enum RollReason {
    /** A broker other than the next candidate is not ready; one broker at a time. */
    BrokerNotReady,
    /** A ready broker is not yet back in the ISR of every partition it hosts. */
    BrokerCatchingUp,
    /** Restarting any remaining broker would leave a partition below min.insync.replicas. */
    MinInSyncReplicasAtRisk,
    /** The operator cannot read partitions and ISRs from the cluster, so it restarts nobody. */
    ClusterUnreachable
}
