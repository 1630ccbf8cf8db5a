package dev.skein.broker.server;

import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * A partition this broker hosts: its log and the replica state around it. On a single broker the
 * broker is the leader and the only in-sync replica, so the high watermark follows the log end
 * offset after each append; the replication issue adds followers, the ISR and their fetch state.
 */
public final class Partition {
    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final PartitionLog log;
    private final int leaderEpoch;
    private volatile long highWatermark;

    Partition(TopicPartition topicPartition, Uuid topicId, PartitionLog log, int leaderEpoch) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        this.leaderEpoch = leaderEpoch;
        this.highWatermark = log.logEndOffset();
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public Uuid topicId() {
        return topicId;
    }

    public PartitionLog log() {
        return log;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    /** Consumers read up to here (exclusive); equal to the log end offset while the ISR is this broker alone. */
    public long highWatermark() {
        return highWatermark;
    }

    /** The in-sync replica count (this broker alone until replication lands). */
    public int inSyncReplicaCount() {
        return 1;
    }

    void advanceHighWatermark() {
        long leo = log.logEndOffset();
        if (leo > highWatermark) {
            highWatermark = leo;
        }
    }

    /** After records are deleted or truncated the watermark can never be below the log start. */
    void clampHighWatermark() {
        long leo = log.logEndOffset();
        highWatermark = Math.min(Math.max(highWatermark, log.logStartOffset()), leo);
    }
}
