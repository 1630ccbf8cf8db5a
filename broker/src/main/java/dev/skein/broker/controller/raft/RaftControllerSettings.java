package dev.skein.broker.controller.raft;

import dev.skein.broker.config.BrokerConfig;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What a {@link RaftController} needs to start: this node, the voters, where the Ratis storage
 * lives and the controller's timings.
 *
 * @param bindHost               the host the Ratis server binds (the CONTROLLER listener's host)
 * @param storageDir             the Ratis storage, {@code <first log dir>/skein-raft}
 * @param requestTimeoutMs       how long a node waits for the quorum before answering a retriable error
 * @param snapshotThreshold      log entries between automatic snapshots
 */
public record RaftControllerSettings(int nodeId, List<QuorumVoter> voters, String bindHost, String clusterId,
                                     Path storageDir, long sessionTimeoutMs, long fenceCheckIntervalMs,
                                     boolean autoLeaderRebalance, long leaderImbalanceCheckIntervalMs,
                                     long requestTimeoutMs, long snapshotThreshold, Map<String, String> topicDefaults) {
    public static final long DEFAULT_SNAPSHOT_THRESHOLD = 1000;

    public RaftControllerSettings {
        voters = List.copyOf(voters);
        topicDefaults = Map.copyOf(topicDefaults);
    }

    public static RaftControllerSettings from(BrokerConfig config, String clusterId) {
        BrokerConfig.Listener listener = config.controllerListener();
        String host = listener == null || listener.host().isEmpty() ? "0.0.0.0" : listener.host();
        long session = config.brokerSessionTimeoutMs();
        return new RaftControllerSettings(config.nodeId(), QuorumVoter.parseAll(config.controllerQuorumVoters()), host,
                clusterId, config.logDirs().getFirst().resolve("skein-raft"), session,
                Math.max(10, Math.min(session / 4, 1000)), config.autoLeaderRebalanceEnable(),
                config.leaderImbalanceCheckIntervalSeconds() * 1000, config.controllerQuorumRequestTimeoutMs(), DEFAULT_SNAPSHOT_THRESHOLD,
                config.topicConfigDefaults());
    }

    public RaftControllerSettings withSnapshotThreshold(long threshold) {
        return new RaftControllerSettings(nodeId, voters, bindHost, clusterId, storageDir, sessionTimeoutMs,
                fenceCheckIntervalMs, autoLeaderRebalance, leaderImbalanceCheckIntervalMs, requestTimeoutMs, threshold,
                topicDefaults);
    }

    QuorumVoter self() {
        return voters.stream().filter(v -> v.id() == nodeId).findFirst().orElseThrow(() ->
                new org.apache.kafka.common.config.ConfigException("controller.quorum.voters", voters.toString(),
                        "node.id " + nodeId + " is not among the voters"));
    }
}
