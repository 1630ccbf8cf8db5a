package dev.skein.operator.cluster;

/** The {@code reason} of a SkeinCluster's Ready condition. */
public enum ClusterReason {
    /** Every broker pod is ready. */
    BrokersReady,
    /** Some broker pods are not ready yet (starting, restarting, or lost). */
    BrokersNotReady
}
