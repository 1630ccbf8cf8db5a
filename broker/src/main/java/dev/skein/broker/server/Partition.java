package dev.skein.broker.server;

import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.replication.Divergence;
import dev.skein.broker.replication.FollowerLogs;
import dev.skein.broker.replication.LeaderState;
import dev.skein.broker.storage.EpochEndOffset;
import dev.skein.broker.storage.LogAppendInfo;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * A partition this broker hosts: its log and its replica state. As leader it holds a
 * {@link LeaderState} (followers' offsets, ISR, high watermark); as follower it keeps the high
 * watermark the leader last sent, capped by its own log end offset.
 *
 * <p>Transitions, all under this object's lock, so an append, a truncation and a change of role
 * never interleave: {@code update} with a registration naming this broker leader in a new epoch
 * makes it leader (followers unknown, high watermark kept); naming another broker (or none) makes
 * it a follower. A registration of the same leader epoch only refreshes the ISR.
 */
public final class Partition {
    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final PartitionLog log;
    private final Object lock = new Object();
    private volatile PartitionRegistration registration;
    private volatile boolean leader;
    private volatile long highWatermark;
    /** The last answer of {@link #emptyRead}; handed out again while the offsets in it hold. */
    private FetchResult lastEmptyRead;
    /** The last answer of {@link #fetchPosition}; handed out again while the offsets in it hold. */
    private FollowerLogs.Position lastPosition;
    private LeaderState leaderState;

    Partition(TopicPartition topicPartition, Uuid topicId, PartitionLog log, PartitionRegistration registration,
              int localBrokerId, long nowMs) {
        this(topicPartition, topicId, log, registration, localBrokerId, nowMs, java.util.OptionalLong.empty());
    }

    /**
     * @param checkpointed the high watermark checkpointed before this start, if any: a committed
     *                     offset, so the watermark starts there (within the log) instead of at the log start
     */
    Partition(TopicPartition topicPartition, Uuid topicId, PartitionLog log, PartitionRegistration registration,
              int localBrokerId, long nowMs, java.util.OptionalLong checkpointed) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        // With this broker as the only replica every record is committed; otherwise the watermark
        // starts from the checkpoint (or the log start) and is learnt again, from the leader or the followers.
        long start = log.logStartOffset();
        this.highWatermark = registration.replicas().equals(List.of(localBrokerId)) ? log.logEndOffset()
                : Math.min(Math.max(checkpointed.orElse(start), start), log.logEndOffset());
        update(registration, localBrokerId, nowMs);
    }

    /**
     * Applies the controller's latest decision about this partition. Returns the role change this
     * caused: {@link RoleChange#BECAME_LEADER}, {@link RoleChange#BECAME_FOLLOWER} or {@link RoleChange#NONE}.
     */
    RoleChange update(PartitionRegistration next, int localBrokerId, long nowMs) {
        synchronized (lock) {
            PartitionRegistration previous = this.registration;
            this.registration = next;
            boolean nowLeader = next.leader() == localBrokerId;
            boolean newEpoch = previous == null || next.leaderEpoch() != previous.leaderEpoch();
            if (nowLeader && (newEpoch || leaderState == null)) {
                leaderState = new LeaderState(localBrokerId, next, log.logEndOffset(), highWatermark, nowMs);
                leader = true;
                return RoleChange.BECAME_LEADER;
            }
            if (nowLeader) {
                leaderState.applyRegistration(next, nowMs);
                return RoleChange.NONE;
            }
            boolean wasLeader = leader;
            leader = false;
            leaderState = null;
            return wasLeader || newEpoch || previous == null ? RoleChange.BECAME_FOLLOWER : RoleChange.NONE;
        }
    }

    enum RoleChange { NONE, BECAME_LEADER, BECAME_FOLLOWER }

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

    /** Consumers read up to here (exclusive). */
    public long highWatermark() {
        return highWatermark;
    }

    /** The size of the in-sync replica set the controller last recorded. */
    public int inSyncReplicaCount() {
        synchronized (lock) {
            return leaderState != null ? leaderState.isr().size() : registration.isr().size();
        }
    }

    /** A copy-free read of the leader state under the lock; empty when not leader. */
    <T> Optional<T> withLeaderState(java.util.function.Function<LeaderState, T> f) {
        synchronized (lock) {
            return leaderState == null ? Optional.empty() : Optional.ofNullable(f.apply(leaderState));
        }
    }

    /** The controller's answer to this leader's ISR change (the image may carry it too; either order works). */
    void applyLeaderRegistration(PartitionRegistration r, long nowMs) {
        synchronized (lock) {
            if (leaderState == null || r.leaderEpoch() != leaderState.leaderEpoch()) {
                return;
            }
            leaderState.applyRegistration(r, nowMs);
            if (r.partitionEpoch() > registration.partitionEpoch()) {
                registration = r;
            }
        }
    }

    /** Leader append; returns null if this broker is no longer the leader. Re-evaluates the watermark. */
    LogAppendInfo appendAsLeader(MemoryRecords records, int minIsr, boolean requireMinIsr) throws IOException {
        synchronized (lock) {
            if (leaderState == null) {
                return null;
            }
            if (requireMinIsr && leaderState.isr().size() < minIsr) {
                throw new org.apache.kafka.common.errors.NotEnoughReplicasException("The size of the current ISR "
                        + leaderState.isr() + " is insufficient to satisfy the min.isr requirement of " + minIsr
                        + " for partition " + topicPartition);
            }
            LogAppendInfo info = log.appendAsLeader(records, leaderState.leaderEpoch());
            maybeAdvanceHighWatermark(minIsr);
            return info;
        }
    }

    /**
     * Leader only: re-evaluates the watermark; returns true if it advanced. The min ISR gate is
     * capped at the replication factor, so a single-replica partition behaves as it always did
     * (acks=all is still refused up front when the ISR is below min ISR).
     */
    boolean maybeAdvanceHighWatermark(int minIsr) {
        synchronized (lock) {
            if (leaderState == null) {
                return false;
            }
            int gate = Math.min(minIsr, registration.replicas().size());
            boolean advanced = leaderState.maybeAdvanceHighWatermark(log.logEndOffset(), gate);
            if (advanced) {
                highWatermark = leaderState.highWatermark();
            }
            return advanced;
        }
    }

    /**
     * Leader side of a follower fetch: checks divergence against {@code lastFetchedEpoch}; if the
     * follower's log is a prefix of ours, records its offset. Returns the diverging epoch, if any.
     */
    FollowerFetchOutcome recordFollowerFetch(int followerId, long fetchOffset, int lastFetchedEpoch, int minIsr,
                                             long nowMs) {
        synchronized (lock) {
            if (leaderState == null) {
                return null;
            }
            java.util.Optional<EpochEndOffset> diverging = Divergence.leaderCheck(lastFetchedEpoch, fetchOffset,
                    leaderState.leaderEpoch(), log.latestEpoch(), log.logEndOffset(), log::endOffsetForEpoch);
            if (diverging.isPresent()) {
                return new FollowerFetchOutcome(diverging.get(), false);
            }
            if (fetchOffset > log.logEndOffset() || fetchOffset < log.logStartOffset()) {
                return FollowerFetchOutcome.RECORDED;
            }
            leaderState.recordFollowerFetch(followerId, fetchOffset, log.logEndOffset(), nowMs);
            return maybeAdvanceHighWatermark(minIsr) ? FollowerFetchOutcome.ADVANCED : FollowerFetchOutcome.RECORDED;
        }
    }

    record FollowerFetchOutcome(EpochEndOffset diverging, boolean highWatermarkAdvanced) {
        /** The outcomes without a divergence, shared: every partition of every follower fetch has one. */
        static final FollowerFetchOutcome RECORDED = new FollowerFetchOutcome(null, false);
        static final FollowerFetchOutcome ADVANCED = new FollowerFetchOutcome(null, true);
    }

    /**
     * Leader only: the ISR with {@code followerId} added if it may join now (caught up to the high
     * watermark and this leader epoch's start, no change in flight), else null.
     */
    List<Integer> isrExpansionFor(int followerId) {
        synchronized (lock) {
            return leaderState == null ? null : leaderState.expandProposal(followerId).orElse(null);
        }
    }

    /**
     * Where this partition's follower fetches from: the one handed out last if its log's end, latest
     * epoch and start have not moved since (the fetcher asks for every followed partition each round).
     */
    FollowerLogs.Position fetchPosition() {
        PartitionLog l = log;
        long end = l.logEndOffset();
        int epoch = l.latestEpoch();
        long start = l.logStartOffset();
        FollowerLogs.Position last = lastPosition;
        if (last == null || last.logEndOffset() != end || last.latestEpoch() != epoch || last.logStartOffset() != start) {
            last = new FollowerLogs.Position(end, epoch, start);
            lastPosition = last; // a race only costs an allocation: a record's fields are final
        }
        return last;
    }

    /**
     * An empty read's answer at this high watermark and log start offset: the one handed out last if
     * they have not moved since. A follower's fetch reads every partition of its session, and most
     * have nothing new, so most answers are this one.
     */
    FetchResult emptyRead(long highWatermark, long logStartOffset) {
        FetchResult last = lastEmptyRead;
        if (last == null || last.highWatermark() != highWatermark || last.logStartOffset() != logStartOffset) {
            last = new FetchResult(Errors.NONE, highWatermark, logStartOffset, MemoryRecords.EMPTY);
            lastEmptyRead = last; // a race only costs an allocation: a record's fields are final
        }
        return last;
    }

    /**
     * Follower append of records fetched from the leader of {@code leaderEpoch}; returns false (and
     * appends nothing) if this broker is no longer a follower in that epoch.
     */
    boolean appendAsFollower(int leaderEpoch, MemoryRecords records, long leaderHighWatermark) throws IOException {
        synchronized (lock) {
            if (leader || registration.leaderEpoch() != leaderEpoch) {
                return false;
            }
            if (records.sizeInBytes() > 0) {
                log.appendAsFollower(records);
            }
            updateFollowerHighWatermark(leaderHighWatermark);
            return true;
        }
    }

    /** Follower: truncates to {@code offset} (divergence); false if no longer a follower in {@code leaderEpoch}. */
    boolean truncateAsFollower(int leaderEpoch, long offset) throws IOException {
        synchronized (lock) {
            if (leader || registration.leaderEpoch() != leaderEpoch) {
                return false;
            }
            log.truncateTo(offset);
            highWatermark = Math.min(highWatermark, log.logEndOffset());
            return true;
        }
    }

    /** Follower: restarts the log empty at the leader's log start offset. */
    boolean truncateFullyAsFollower(int leaderEpoch, long offset) throws IOException {
        synchronized (lock) {
            if (leader || registration.leaderEpoch() != leaderEpoch) {
                return false;
            }
            log.truncateFullyAndStartAt(offset);
            highWatermark = offset;
            return true;
        }
    }

    private void updateFollowerHighWatermark(long leaderHighWatermark) {
        long next = Math.min(leaderHighWatermark, log.logEndOffset());
        if (next > highWatermark) {
            highWatermark = next;
        }
    }

    /** After records are deleted or truncated the watermark can never be below the log start. */
    void clampHighWatermark() {
        synchronized (lock) {
            long leo = log.logEndOffset();
            highWatermark = Math.min(Math.max(highWatermark, log.logStartOffset()), leo);
        }
    }
}
