package dev.skein.broker.replication;

import dev.skein.broker.storage.EpochEndOffset;

import java.util.Optional;
import java.util.function.IntFunction;

/**
 * The two halves of KIP-320 divergence detection, as pure functions shared by the broker and the
 * replication simulation: the leader decides from a follower's {@code LastFetchedEpoch} and fetch
 * offset whether the follower's log diverged from its own, and the follower decides where to
 * truncate from the leader's answer.
 */
public final class Divergence {
    private Divergence() {
    }

    /**
     * Leader side. {@code endForEpoch} is the leader log's OffsetForLeaderEpoch. A leader that has
     * not yet written in its own epoch behaves as if that epoch started at its log end offset
     * (Kafka records the epoch start on election), so a follower holding batches of a deposed
     * leader's later epoch is still told where to truncate.
     *
     * @return the epoch and end offset to send back as {@code DivergingEpoch}, or empty if the
     *         follower's log is a prefix of the leader's
     */
    public static Optional<EpochEndOffset> leaderCheck(int lastFetchedEpoch, long fetchOffset, int currentLeaderEpoch,
                                                       int latestLogEpoch, long logEndOffset,
                                                       IntFunction<EpochEndOffset> endForEpoch) {
        if (lastFetchedEpoch < 0) {
            return Optional.empty();
        }
        EpochEndOffset end;
        if (lastFetchedEpoch > latestLogEpoch && lastFetchedEpoch <= currentLeaderEpoch) {
            end = lastFetchedEpoch == currentLeaderEpoch || latestLogEpoch < 0
                    ? new EpochEndOffset(lastFetchedEpoch, logEndOffset)
                    : new EpochEndOffset(latestLogEpoch, logEndOffset);
        } else {
            end = endForEpoch.apply(lastFetchedEpoch);
        }
        if (end.epoch() < 0 || end.endOffset() < 0) {
            // the leader knows nothing of that epoch (its log start moved past it): the offset check decides
            return Optional.empty();
        }
        if (end.epoch() != lastFetchedEpoch || end.endOffset() < fetchOffset) {
            return Optional.of(end);
        }
        return Optional.empty();
    }

    /**
     * Follower side: where to truncate after the leader answered {@code diverging}; never beyond
     * the local log end, and never beyond where the local log's copy of that epoch ends.
     */
    public static long truncationOffset(EpochEndOffset diverging, EpochEndOffset localEndForEpoch, long localLogEndOffset) {
        long localEnd = localEndForEpoch.endOffset() < 0 ? localLogEndOffset : localEndForEpoch.endOffset();
        return Math.min(Math.min(diverging.endOffset(), localEnd), localLogEndOffset);
    }
}
