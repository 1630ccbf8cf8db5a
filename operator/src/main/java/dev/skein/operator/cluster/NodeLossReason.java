package dev.skein.operator.cluster;

/**
 * Why node-loss handling waits, refuses or acts: the {@code reason} of the SkeinCluster's Degraded
 * condition and of the Events the operator emits for each step.
 */
public enum NodeLossReason {
    /** No broker's node is lost and no replacement is under way. */
    NoNodeLost,
    /** A broker's node is NotReady or gone, for less than {@code spec.nodeLoss.timeoutSeconds} so far. */
    NodeLost,
    /** {@code spec.nodeLoss.enabled} is false: the lost broker is reported, not replaced. */
    ReplacementDisabled,
    /** Brokers on more than one node are lost at once (a zone or network outage?): nobody is replaced. */
    MultipleNodesLost,
    /** Without the lost voter fewer than a majority of the controller voters are ready. */
    QuorumAtRisk,
    /** A partition's only in-sync replica is on the lost broker: deleting its volume would lose data. */
    DataOnlyOnLostBroker,
    /** The lost broker's volume is node-local and {@code spec.nodeLoss.replaceLocalVolumes} is false. */
    LocalVolumeNotReplaced,
    /** Another broker is not ready: one broker at a time. */
    BrokerNotReady,
    /** Partitions and ISRs cannot be read from the cluster, so nothing is deleted. */
    ClusterUnreachable,
    /** The recovery throttle is being set before the replacement starts. */
    ThrottleSet,
    /** The lost broker's node-local claim is deleted so its replacement gets a fresh volume. */
    VolumeDeleted,
    /** The lost broker's pod is force-deleted (UID precondition) so the StatefulSet recreates it elsewhere. */
    PodForceDeleted,
    /** The replacement pod is not ready yet. */
    ReplacementStarting,
    /** The replacement broker is ready and re-replicating: some ISR is not full yet. */
    ReplacementCatchingUp,
    /** Every ISR is full again: the recovery throttle is removed and the replacement is over. */
    ReplacementComplete,
    /** The node came back before anything was deleted: the replacement is called off. */
    NodeRecovered
}
