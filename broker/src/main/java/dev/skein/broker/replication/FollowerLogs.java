package dev.skein.broker.replication;

import dev.skein.broker.storage.EpochEndOffset;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.MemoryRecords;

import java.io.IOException;

/**
 * The local side of follower replication, as the fetcher sees it. Every write names the leader
 * epoch it was fetched in and is refused (returns false) if the partition has since changed role
 * or epoch, so a late response never touches a log that moved on.
 */
public interface FollowerLogs {

    /**
     * Where to fetch from: the local log end offset, latest epoch and log start; null if not hosted
     * as a follower. Asked for every followed partition on every fetch round.
     */
    Position position(TopicPartition tp);

    /** The local end offset of {@code epoch} (Kafka's OffsetForLeaderEpoch semantics). */
    EpochEndOffset endOffsetForEpoch(TopicPartition tp, int epoch);

    boolean append(TopicPartition tp, int leaderEpoch, MemoryRecords records, long leaderHighWatermark) throws IOException;

    boolean truncate(TopicPartition tp, int leaderEpoch, long offset) throws IOException;

    boolean truncateFullyAndStartAt(TopicPartition tp, int leaderEpoch, long offset) throws IOException;

    record Position(long logEndOffset, int latestEpoch, long logStartOffset) {
    }
}
