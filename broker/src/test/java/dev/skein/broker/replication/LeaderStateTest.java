package dev.skein.broker.replication;

import dev.skein.broker.metadata.PartitionRegistration;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class LeaderStateTest {
    private static final long LAG = 10_000;

    private static PartitionRegistration reg(List<Integer> isr, int leaderEpoch, int partitionEpoch) {
        return new PartitionRegistration(List.of(0, 1, 2), isr, 0, leaderEpoch, partitionEpoch, List.of(), List.of());
    }

    @Test
    void highWatermarkIsMinimumLogEndOffsetOverIsr() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1, 2), 1, 1), 0, 0, 0);
        s.recordFollowerFetch(1, 5, 10, 1);
        assertThat(s.maybeAdvanceHighWatermark(10, 2)).isFalse(); // follower 2 unknown
        s.recordFollowerFetch(2, 7, 10, 1);
        assertThat(s.maybeAdvanceHighWatermark(10, 2)).isTrue();
        assertThat(s.highWatermark()).isEqualTo(5);
        s.recordFollowerFetch(1, 10, 10, 2);
        s.maybeAdvanceHighWatermark(10, 2);
        assertThat(s.highWatermark()).isEqualTo(7);
    }

    @Test
    void highWatermarkNeverDecreases() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1), 1, 1), 0, 8, 0);
        s.recordFollowerFetch(1, 3, 10, 1);
        assertThat(s.maybeAdvanceHighWatermark(10, 1)).isFalse();
        assertThat(s.highWatermark()).isEqualTo(8);
    }

    @Test
    void highWatermarkHoldsWhileIsrBelowMinInsyncReplicas() {
        LeaderState s = new LeaderState(0, reg(List.of(0), 1, 1), 0, 0, 0);
        assertThat(s.maybeAdvanceHighWatermark(10, 2)).isFalse();
        assertThat(s.highWatermark()).isZero();
        assertThat(s.maybeAdvanceHighWatermark(10, 1)).isTrue();
        assertThat(s.highWatermark()).isEqualTo(10);
    }

    @Test
    void followerOutOfIsrAfterLagTimeout() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1, 2), 1, 1), 0, 0, 1_000);
        s.recordFollowerFetch(1, 0, 0, 1_000);
        s.recordFollowerFetch(2, 0, 0, 1_000);
        // leader appends to 10; follower 1 keeps up, follower 2 stays at 0
        s.recordFollowerFetch(1, 10, 10, 5_000);
        s.recordFollowerFetch(2, 0, 10, 5_000);
        assertThat(s.shrinkProposal(10, 1_000 + LAG, LAG)).isEmpty();
        assertThat(s.shrinkProposal(10, 1_001 + LAG, LAG)).contains(List.of(0, 1));
    }

    @Test
    void followerCaughtUpToPreviousFetchLeaderEndCountsFromThatFetch() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1), 1, 1), 0, 0, 0);
        s.recordFollowerFetch(1, 10, 10, 1_000);     // caught up at 1000
        s.recordFollowerFetch(1, 10, 20, 2_000);     // leader moved to 20: not caught up now
        s.recordFollowerFetch(1, 20, 30, 3_000);     // reached the leader end of the previous fetch: caught up at 2000
        assertThat(s.shrinkProposal(30, 2_000 + LAG, LAG)).isEmpty();
        assertThat(s.shrinkProposal(30, 2_001 + LAG, LAG)).contains(List.of(0));
    }

    @Test
    void followerAtLeaderEndIsNeverRemoved() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1), 1, 1), 0, 0, 0);
        s.recordFollowerFetch(1, 10, 10, 0);
        assertThat(s.shrinkProposal(10, 10 * LAG, LAG)).isEmpty();
    }

    @Test
    void expandNeedsHighWatermarkAndEpochStart() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1), 3, 1), 20, 15, 0);
        s.recordFollowerFetch(2, 16, 25, 0);
        assertThat(s.expandProposal(2)).isEmpty();   // below the leader epoch start offset
        s.recordFollowerFetch(2, 20, 25, 0);
        assertThat(s.expandProposal(2)).contains(List.of(0, 1, 2));
        assertThat(s.expandProposal(1)).isEmpty();   // already in the ISR
    }

    @Test
    void maximalIsrCountsPendingMemberAndKeepsPendingRemovals() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1), 1, 1), 0, 0, 0);
        s.recordFollowerFetch(1, 10, 10, 0);
        s.recordFollowerFetch(2, 4, 10, 0);
        s.markPending(List.of(0, 1, 2));
        assertThat(s.maximalIsr()).isEqualTo(Set.of(0, 1, 2));
        s.maybeAdvanceHighWatermark(10, 1);
        assertThat(s.highWatermark()).isEqualTo(4);   // the joining follower already counts
        assertThat(s.expandProposal(2)).isEmpty();    // one change in flight
        s.applyRegistration(reg(List.of(0, 1, 2), 1, 2), 0);
        assertThat(s.hasPendingIsrChange()).isFalse();
        assertThat(s.isr()).containsExactly(0, 1, 2);

        // a pending shrink keeps the old members for the watermark
        s.markPending(List.of(0, 1));
        s.recordFollowerFetch(1, 10, 12, 0);
        s.maybeAdvanceHighWatermark(12, 1);
        assertThat(s.highWatermark()).isEqualTo(4);
        assertThat(s.maximalIsr()).containsExactlyInAnyOrder(0, 1, 2);
    }

    @Test
    void staleRegistrationDoesNotClearPendingChange() {
        LeaderState s = new LeaderState(0, reg(List.of(0, 1, 2), 1, 5), 0, 0, 0);
        s.markPending(List.of(0, 1));
        s.applyRegistration(reg(List.of(0, 1, 2), 1, 5), 0);
        assertThat(s.hasPendingIsrChange()).isTrue();
        s.applyRegistration(reg(List.of(0, 1, 2), 1, 4), 0);
        assertThat(s.hasPendingIsrChange()).isTrue();
        s.applyRegistration(reg(List.of(0, 2), 1, 6), 0);
        assertThat(s.hasPendingIsrChange()).isFalse();
        assertThat(s.isr()).containsExactly(0, 2);
        assertThat(s.shrinkProposal(0, 0, LAG)).isEqualTo(Optional.empty());
    }
}
