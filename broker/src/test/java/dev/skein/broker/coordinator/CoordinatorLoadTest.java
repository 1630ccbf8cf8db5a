package dev.skein.broker.coordinator;

import static dev.skein.broker.coordinator.Harness.done;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class CoordinatorLoadTest {
    @Test
    void replayOfStoredRecordsRebuildsOffsetsAndStableGroupWithAssignments() {
        Harness before = new Harness();
        CompletableFuture<JoinGroupResponseData> a = before.joinStatic("g", "", "instance-a");
        CompletableFuture<JoinGroupResponseData> b = before.joinDynamic("g");
        before.advance(6000);
        JoinGroupResponseData leader = done(a).leader().equals(done(a).memberId()) ? done(a) : done(b);
        JoinGroupResponseData follower = leader == done(a) ? done(b) : done(a);
        String followerInstance = follower == done(a) ? "instance-a" : null;
        done(before.sync("g", leader.memberId(), leader == done(a) ? "instance-a" : null, 1,
                Map.of(leader.memberId(), new byte[]{1}, follower.memberId(), new byte[]{2})));
        before.commit("g", leader.memberId(), 1, "topic-a", 0, 100);
        before.commit("simple", "", -1, "topic-b", 2, 200);

        Harness after = new Harness(Harness.CONFIG, before.store);
        assertThat(after.committed("g", "topic-a", 0)).isEqualTo(100);
        assertThat(after.committed("simple", "topic-b", 2)).isEqualTo(200);
        assertThat(after.stateOf("simple")).isEqualTo(GroupState.EMPTY);
        assertThat(after.stateOf("g")).isEqualTo(GroupState.STABLE);
        ClassicGroup g = after.state.group("g");
        assertThat(g.generationId()).isEqualTo(1);
        assertThat(g.protocolName()).isEqualTo("range");
        assertThat(g.leaderId()).isEqualTo(leader.memberId());
        assertThat(g.staticMemberId("instance-a")).isNotNull();

        // Restored members carry on: heartbeats and syncs work, assignments survive.
        assertThat(after.heartbeat("g", follower.memberId(), followerInstance, 1)).isEqualTo(Errors.NONE);
        SyncGroupResponseData s = done(after.sync("g", follower.memberId(), followerInstance, 1, Map.of()));
        assertThat(s.assignment()).containsExactly(2);
    }

    @Test
    void restoredMembersThatNeverHeartbeatAreRemovedAfterSessionTimeout() {
        Harness before = new Harness();
        CompletableFuture<JoinGroupResponseData> a = before.joinDynamic("g");
        before.advance(3000);
        done(before.sync("g", done(a).memberId(), 1, Map.of()));

        Harness after = new Harness(Harness.CONFIG, before.store);
        assertThat(after.stateOf("g")).isEqualTo(GroupState.STABLE);
        after.advance(Harness.SESSION_MS);
        assertThat(after.stateOf("g")).isEqualTo(GroupState.EMPTY);
        assertThat(after.state.group("g").generationId()).isEqualTo(2);

        // The empty generation was stored too.
        Harness third = new Harness(Harness.CONFIG, after.store);
        assertThat(third.stateOf("g")).isEqualTo(GroupState.EMPTY);
        assertThat(third.state.group("g").generationId()).isEqualTo(2);
        assertThat(third.state.group("g").protocolType()).isEqualTo("consumer");
    }

    @Test
    void laterRecordsOverrideEarlierOnesAndTombstonesDelete() {
        InMemoryOffsetStore store = new InMemoryOffsetStore();
        store.append("g", List.of(
                CoordinatorRecords.offsetCommit("g", "t", 0, new CoordinatorRecords.OffsetValue(1, -1, "", 0, -1)),
                CoordinatorRecords.offsetCommit("g", "t", 0, new CoordinatorRecords.OffsetValue(2, -1, "", 0, -1)),
                CoordinatorRecords.offsetCommit("g", "t", 1, new CoordinatorRecords.OffsetValue(3, -1, "", 0, -1)),
                CoordinatorRecords.offsetTombstone("g", "t", 1),
                new CoordinatorRecord(new byte[]{0, 99}, null))); // unknown record type: skipped
        Harness h = new Harness(Harness.CONFIG, store);
        assertThat(h.committed("g", "t", 0)).isEqualTo(2);
        assertThat(h.committed("g", "t", 1)).isEqualTo(-1);
    }
}
