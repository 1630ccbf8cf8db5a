package dev.skein.broker.server;

import org.apache.kafka.common.TopicIdPartition;

import java.util.Optional;

/**
 * One partition of a fetch: where to read from and how much; for a follower also the epoch of
 * the last batch it holds ({@code -1} if unknown), against which the leader checks divergence.
 */
public record FetchRequestPartition(TopicIdPartition partition, long fetchOffset, int maxBytes,
                                    Optional<Integer> currentLeaderEpoch, int lastFetchedEpoch) {
    public FetchRequestPartition(TopicIdPartition partition, long fetchOffset, int maxBytes,
                                 Optional<Integer> currentLeaderEpoch) {
        this(partition, fetchOffset, maxBytes, currentLeaderEpoch, -1);
    }
}
