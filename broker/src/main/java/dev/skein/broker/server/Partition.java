package dev.skein.broker.server;

import dev.skein.broker.metadata.PartitionRegistration;
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
    private volatile PartitionRegistration registration;
    private volatile boolean leader;
    private volatile long highWatermark;

    Partition(TopicPartition topicPartition, Uuid topicId, PartitionLog log, PartitionRegistration registration,
              int localBrokerId) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        this.highWatermark = log.logEndOffset();
        update(registration, localBrokerId);
    }

    /** Applies the controller's latest decision about this partition. */
    void update(PartitionRegistration registration, int localBrokerId) {
        this.registration = registration;
        this.leader = registration.leader() == localBrokerId;
    }

    public PartitionRegistration registration() {
        return registration;
    }

    /** True if this broker leads the partition: it takes produce and consumer fetches. */
    public boolean isLeader() {
        return leader;
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
        return registration.leaderEpoch();
    }

    /** Consumers read up to here (exclusive); equal to the log end offset while the ISR is this broker alone. */
    public long highWatermark() {
        return highWatermark;
    }

    /** The size of the in-sync replica set the controller last recorded. */
    public int inSyncReplicaCount() {
        return registration.isr().size();
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
