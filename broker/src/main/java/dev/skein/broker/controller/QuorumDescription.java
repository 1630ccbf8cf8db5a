package dev.skein.broker.controller;

import org.apache.kafka.common.Uuid;

import java.util.List;

/**
 * The controller quorum as one node sees it, what Kafka's DescribeQuorum (API 55) reports: the
 * voters of the current configuration, each with the directory id of its metadata log dir (the
 * voter key), the leader, its epoch (the Raft term) and the high watermark (the commit index).
 *
 * @param leaderId      the active controller, -1 if unknown
 * @param leaderEpoch   the Raft term, -1 if unknown
 * @param highWatermark the committed index of the metadata log, -1 if unknown
 */
public record QuorumDescription(int leaderId, long leaderEpoch, long highWatermark, List<Voter> voters) {
    public QuorumDescription {
        voters = List.copyOf(voters);
    }

    /**
     * @param logEndOffset this node's log end offset for itself, -1 for the others (unknown)
     */
    public record Voter(int nodeId, Uuid directoryId, long logEndOffset) {
    }
}
