package dev.skein.operator.cluster;

/** The {@code reason} of a SkeinCluster's Progressing (and, for a refusal, Ready) condition while scaling. */
public enum ScaleReason {
    /** Replicas are being moved off the departing brokers, or their pods are being removed. */
    ScalingDown,
    /** The new broker count is below the number of controller voters: a voter would be removed. */
    ControllerVoterRemoval,
    /** Some topic (or {@code __consumer_offsets}) has more replicas than the remaining brokers. */
    ReplicationFactorAboveBrokers,
    /** The operator cannot read partitions and reassignments from the cluster, so it moves nothing. */
    ClusterUnreachable
}
