package dev.skein.operator.cluster;

/** The {@code reason} of a SkeinCluster's Ready condition. */
public enum ClusterReason {
    /** Every broker pod is ready. */
    BrokersReady,
    /** Some broker pods are not ready yet (starting, restarting, or lost). */
    BrokersNotReady,
    /** A broker container's image cannot be pulled (wrong name or tag, or no access). */
    ImagePullFailed,
    /** The broker volumes ask for a StorageClass the cluster does not have. */
    StorageClassNotFound
}
