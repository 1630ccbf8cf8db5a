package dev.skein.broker.replication;

import dev.skein.broker.metadata.PartitionRegistration;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the leader of one partition knows about its replicas during one leader epoch: each
 * follower's log end offset and last caught-up time, the ISR the controller last committed, an ISR
 * change in flight, and the high watermark. Pure state: no threads, no I/O, time passed in as
 * {@code nowMs}; the caller serialises access (the partition's lock).
 *
 * <p>Guarantees (Kafka's rules, KIP-101/279/320):
 * <ul>
 *   <li>the high watermark never decreases, and it only advances while the committed ISR holds at
 *       least {@code min.insync.replicas} members; it is the smallest log end offset over the
 *       <em>maximal</em> ISR (the committed ISR plus the members of an expansion in flight; a
 *       shrink in flight keeps the old members), so it never exceeds what every replica that may
 *       be elected holds;</li>
 *   <li>a follower is caught up at a fetch if it fetched at or beyond the leader's log end offset
 *       as of that fetch, or beyond the leader's log end offset as of its previous fetch (then it
 *       was caught up at the previous fetch's time);</li>
 *   <li>at most one ISR change is in flight; a new one is proposed only after the controller
 *       answered or published a newer partition epoch.</li>
 * </ul>
 */
public final class LeaderState {
    /** The log end offset of a follower that has not fetched in this leader epoch. */
    public static final long UNKNOWN_OFFSET = -1L;

    private final int localId;
    private final int leaderEpoch;
    private final long leaderEpochStartOffset;
    /**
     * The followers by replica id, a handful: a scan of this array, not a map, because every follower
     * fetch looks one up for each partition it reads (a TreeMap of boxed ids was 4.8 % of the brokers'
     * samples in the three-broker acks=all run). Replaced, not changed in place, when the replicas change.
     */
    private Follower[] followers;
    private List<Integer> isr;
    private int partitionEpoch;
    private List<Integer> pendingIsr;
    private int pendingBaseEpoch;
    private long highWatermark;

    /**
     * @param leaderEpochStartOffset the leader's log end offset when it took over: a follower must
     *                               hold at least this much to join the ISR
     * @param highWatermark          the watermark the new leader starts with (it only goes up from here)
     */
    public LeaderState(int localId, PartitionRegistration registration, long leaderEpochStartOffset,
                       long highWatermark, long nowMs) {
        this.localId = localId;
        this.leaderEpoch = registration.leaderEpoch();
        this.leaderEpochStartOffset = leaderEpochStartOffset;
        this.highWatermark = highWatermark;
        this.isr = registration.isr();
        this.partitionEpoch = registration.partitionEpoch();
        List<Follower> initial = new ArrayList<>();
        for (int r : registration.replicas()) {
            if (r != localId) {
                // Kafka: ISR members get the benefit of the doubt for one lag period after an election
                initial.add(new Follower(r, registration.isInSync(r) ? nowMs : 0L));
            }
        }
        this.followers = initial.toArray(new Follower[0]);
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public long leaderEpochStartOffset() {
        return leaderEpochStartOffset;
    }

    public long highWatermark() {
        return highWatermark;
    }

    /** The ISR the controller last committed. */
    public List<Integer> isr() {
        return isr;
    }

    public int partitionEpoch() {
        return partitionEpoch;
    }

    public boolean hasPendingIsrChange() {
        return pendingIsr != null;
    }

    /** The committed ISR, plus the new members of a change in flight (Kafka's maximal ISR). */
    public Set<Integer> maximalIsr() {
        Set<Integer> out = new LinkedHashSet<>(isr);
        if (pendingIsr != null) {
            out.addAll(pendingIsr);
        }
        return out;
    }

    public long followerLogEndOffset(int followerId) {
        Follower f = follower(followerId);
        return f == null ? UNKNOWN_OFFSET : f.logEndOffset;
    }

    private Follower follower(int id) {
        for (Follower f : followers) {
            if (f.id == id) {
                return f;
            }
        }
        return null;
    }

    /**
     * A registration of this leader epoch from the controller (its answer to an ISR change, or a
     * published image): adopts its ISR and partition epoch, and drops the change in flight once the
     * partition epoch moved past the one it was based on. Older registrations are ignored.
     */
    public void applyRegistration(PartitionRegistration registration, long nowMs) {
        if (registration.leaderEpoch() != leaderEpoch || registration.partitionEpoch() < partitionEpoch) {
            return;
        }
        if (pendingIsr != null && registration.partitionEpoch() > pendingBaseEpoch) {
            pendingIsr = null;
        }
        List<Follower> next = new ArrayList<>();
        for (int r : registration.replicas()) {
            if (r != localId) {
                Follower f = follower(r);
                next.add(f != null ? f : new Follower(r, 0L));
            }
        }
        followers = next.toArray(new Follower[0]);
        this.isr = registration.isr();
        this.partitionEpoch = registration.partitionEpoch();
    }

    /** The controller refused the change in flight for good (not a stale partition epoch): allow another. */
    public void abandonPendingIsrChange() {
        pendingIsr = null;
    }

    /**
     * Records a follower fetch from {@code fetchOffset} (its log end offset) when the leader's log
     * ends at {@code leaderLogEndOffset}. The fetch must have passed the divergence check.
     */
    public void recordFollowerFetch(int followerId, long fetchOffset, long leaderLogEndOffset, long nowMs) {
        Follower f = follower(followerId);
        if (f == null) {
            return;
        }
        if (fetchOffset >= leaderLogEndOffset) {
            f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, nowMs);
        } else if (fetchOffset >= f.lastFetchLeaderLogEndOffset) {
            f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
        }
        f.logEndOffset = fetchOffset;
        f.lastFetchLeaderLogEndOffset = leaderLogEndOffset;
        f.lastFetchTimeMs = nowMs;
    }

    /**
     * Recomputes the high watermark from the leader's own log end offset and the followers'.
     * Returns true if it advanced.
     */
    public boolean maybeAdvanceHighWatermark(long leaderLogEndOffset, int minInsyncReplicas) {
        if (isr.size() < minInsyncReplicas) {
            return false;
        }
        // the maximal ISR without building it: this runs on every follower fetch and every append
        long candidate = minLogEndOffset(isr, leaderLogEndOffset);
        if (pendingIsr != null) {
            candidate = minLogEndOffset(pendingIsr, candidate);
        }
        if (candidate > highWatermark) {
            highWatermark = candidate;
            return true;
        }
        return false;
    }

    /**
     * An ISR without the followers that have not caught up within {@code lagTimeMaxMs}, if any
     * such follower is in the ISR and no change is in flight. The leader never removes itself.
     */
    public Optional<List<Integer>> shrinkProposal(long leaderLogEndOffset, long nowMs, long lagTimeMaxMs) {
        if (pendingIsr != null) {
            return Optional.empty();
        }
        List<Integer> kept = new ArrayList<>();
        for (int r : isr) {
            if (r == localId || isCaughtUp(r, leaderLogEndOffset, nowMs, lagTimeMaxMs)) {
                kept.add(r);
            }
        }
        return kept.size() < isr.size() ? Optional.of(kept) : Optional.empty();
    }

    /**
     * The ISR plus {@code followerId} if it is out of the ISR and now holds the high watermark and
     * everything the leader wrote before its epoch began; empty otherwise or while a change is in flight.
     */
    public Optional<List<Integer>> expandProposal(int followerId) {
        if (pendingIsr != null || isr.contains(followerId)) {
            return Optional.empty();
        }
        Follower f = follower(followerId);
        if (f == null || f.logEndOffset < highWatermark || f.logEndOffset < leaderEpochStartOffset) {
            return Optional.empty();
        }
        List<Integer> next = new ArrayList<>(isr);
        next.add(followerId);
        return Optional.of(next);
    }

    /** Marks {@code proposed} as sent to the controller, based on the current partition epoch. */
    public void markPending(List<Integer> proposed) {
        this.pendingIsr = List.copyOf(proposed);
        this.pendingBaseEpoch = partitionEpoch;
    }

    /** How far behind the leader's log end offset the follower is (the whole log if it never fetched). */
    public long lag(int followerId, long leaderLogEndOffset) {
        Follower f = follower(followerId);
        long leo = f == null || f.logEndOffset < 0 ? 0 : f.logEndOffset;
        return Math.max(0, leaderLogEndOffset - leo);
    }

    /** The smallest of {@code bound} and the log end offsets of the followers among {@code members}. */
    private long minLogEndOffset(List<Integer> members, long bound) {
        long min = bound;
        for (int i = 0, n = members.size(); i < n; i++) {
            int r = members.get(i);
            if (r == localId) {
                continue;
            }
            Follower f = follower(r);
            min = Math.min(min, f == null ? UNKNOWN_OFFSET : f.logEndOffset);
        }
        return min;
    }

    private boolean isCaughtUp(int followerId, long leaderLogEndOffset, long nowMs, long lagTimeMaxMs) {
        Follower f = follower(followerId);
        if (f == null) {
            return false;
        }
        return f.logEndOffset >= leaderLogEndOffset || nowMs - f.lastCaughtUpTimeMs <= lagTimeMaxMs;
    }

    private static final class Follower {
        long logEndOffset = UNKNOWN_OFFSET;
        long lastCaughtUpTimeMs;
        long lastFetchTimeMs;
        long lastFetchLeaderLogEndOffset = Long.MAX_VALUE;

        final int id;

        Follower(int id, long lastCaughtUpTimeMs) {
            this.id = id;
            this.lastCaughtUpTimeMs = lastCaughtUpTimeMs;
            this.lastFetchTimeMs = lastCaughtUpTimeMs;
        }
    }
}
