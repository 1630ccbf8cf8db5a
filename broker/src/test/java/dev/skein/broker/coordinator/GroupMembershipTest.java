package dev.skein.broker.coordinator;

import static dev.skein.broker.coordinator.Harness.error;
import static dev.skein.broker.coordinator.Harness.joinRequest;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class GroupMembershipTest {
    private final Harness h = new Harness();

    /** Forms a Stable group of n dynamic members; returns the join responses (leader first is not guaranteed). */
    private List<JoinGroupResponseData> formGroup(String groupId, int n) {
        List<CompletableFuture<JoinGroupResponseData>> joins = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            joins.add(h.joinDynamic(groupId));
        }
        h.advance(h.config.groupInitialRebalanceDelayMs());
        h.advance(h.config.groupInitialRebalanceDelayMs());
        List<JoinGroupResponseData> responses = joins.stream().map(Harness::done).toList();
        syncAll(groupId, responses);
        assertThat(h.stateOf(groupId)).isEqualTo(GroupState.STABLE);
        return responses;
    }

    private Map<String, SyncGroupResponseData> syncAll(String groupId, List<JoinGroupResponseData> responses) {
        Map<String, CompletableFuture<SyncGroupResponseData>> syncs = new HashMap<>();
        JoinGroupResponseData leader = null;
        for (JoinGroupResponseData r : responses) {
            if (r.leader().equals(r.memberId())) {
                leader = r;
                continue;
            }
            syncs.put(r.memberId(), h.sync(groupId, r.memberId(), r.generationId(), Map.of()));
        }
        assertThat(leader).isNotNull();
        Map<String, byte[]> assignment = new HashMap<>();
        for (JoinGroupResponseData.JoinGroupResponseMember m : leader.members()) {
            assignment.put(m.memberId(), ("assigned-" + m.memberId()).getBytes());
        }
        syncs.put(leader.memberId(), h.sync(groupId, leader.memberId(), leader.generationId(), assignment));
        Map<String, SyncGroupResponseData> out = new HashMap<>();
        syncs.forEach((m, f) -> out.put(m, f.getNow(null)));
        return out;
    }

    @Test
    void firstJoinWithoutMemberIdGetsMemberIdRequiredWithGeneratedId() {
        JoinGroupResponseData r = h.join(joinRequest("g", "")).getNow(null);
        assertThat(error(r)).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        assertThat(r.memberId()).startsWith("client-");
        assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);

        CompletableFuture<JoinGroupResponseData> second = h.join(joinRequest("g", r.memberId()));
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);
        h.advance(3000);
        assertThat(second).isDone();
        assertThat(second.getNow(null).memberId()).isEqualTo(r.memberId());
        assertThat(second.getNow(null).generationId()).isEqualTo(1);
    }

    @Test
    void joinGroupV3WithoutMemberIdIsAcceptedDirectly() {
        CompletableFuture<JoinGroupResponseData> f = h.join(joinRequest("g", ""), (short) 3);
        h.advance(3000);
        JoinGroupResponseData r = f.getNow(null);
        assertThat(error(r)).isEqualTo(Errors.NONE);
        assertThat(r.memberId()).startsWith("client-");
        assertThat(r.leader()).isEqualTo(r.memberId());
    }

    @Test
    void threeMembersFormOneGenerationWithOneLeaderAndSyncDistributesAssignments() {
        List<CompletableFuture<JoinGroupResponseData>> joins = List.of(h.joinDynamic("g"), h.joinDynamic("g"), h.joinDynamic("g"));
        h.advance(3000);
        assertThat(joins).noneMatch(CompletableFuture::isDone);
        h.advance(3000);
        List<JoinGroupResponseData> rs = joins.stream().map(Harness::done).toList();
        assertThat(rs).allSatisfy(r -> {
            assertThat(error(r)).isEqualTo(Errors.NONE);
            assertThat(r.generationId()).isEqualTo(1);
            assertThat(r.protocolName()).isEqualTo("range");
            assertThat(r.protocolType()).isEqualTo("consumer");
        });
        assertThat(rs.stream().map(JoinGroupResponseData::leader).distinct()).hasSize(1);
        String leader = rs.get(0).leader();
        assertThat(rs).filteredOn(r -> r.memberId().equals(leader)).singleElement()
                .satisfies(r -> assertThat(r.members()).hasSize(3));
        assertThat(rs).filteredOn(r -> !r.memberId().equals(leader)).allSatisfy(r -> assertThat(r.members()).isEmpty());
        assertThat(h.stateOf("g")).isEqualTo(GroupState.COMPLETING_REBALANCE);

        Map<String, SyncGroupResponseData> syncs = syncAll("g", rs);
        assertThat(syncs).hasSize(3);
        syncs.forEach((member, r) -> {
            assertThat(error(r)).isEqualTo(Errors.NONE);
            assertThat(new String(r.assignment())).isEqualTo("assigned-" + member);
        });
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
        assertThat(h.store.decoded()).anySatisfy(d -> assertThat(d).isInstanceOf(CoordinatorRecords.GroupRecord.class));
    }

    @Test
    void followerSyncWaitsUntilLeaderAssignmentIsDurable() {
        List<CompletableFuture<JoinGroupResponseData>> joins = List.of(h.joinDynamic("g"), h.joinDynamic("g"));
        h.advance(6000);
        List<JoinGroupResponseData> rs = joins.stream().map(Harness::done).toList();
        JoinGroupResponseData leader = rs.stream().filter(r -> r.leader().equals(r.memberId())).findFirst().orElseThrow();
        JoinGroupResponseData follower = rs.stream().filter(r -> !r.leader().equals(r.memberId())).findFirst().orElseThrow();
        CompletableFuture<SyncGroupResponseData> fs = h.sync("g", follower.memberId(), 1, Map.of());
        h.store.holdAppends();
        CompletableFuture<SyncGroupResponseData> ls = h.sync("g", leader.memberId(), 1,
                Map.of(follower.memberId(), new byte[]{1}, leader.memberId(), new byte[]{2}));
        assertThat(fs).isNotDone();
        assertThat(ls).isNotDone();
        h.store.releaseAppends();
        assertThat(fs.getNow(null).assignment()).containsExactly(1);
        assertThat(ls.getNow(null).assignment()).containsExactly(2);
    }

    @Test
    void failedAssignmentStoreFailsSyncAndRestartsRebalance() {
        CompletableFuture<JoinGroupResponseData> j = h.joinDynamic("g");
        h.advance(3000);
        JoinGroupResponseData r = j.getNow(null);
        h.store.failNextAppend(new org.apache.kafka.common.errors.NotEnoughReplicasException("x"));
        SyncGroupResponseData s = h.sync("g", r.memberId(), 1, Map.of(r.memberId(), new byte[]{1})).getNow(null);
        assertThat(error(s)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);
    }

    @Test
    void memberLeavingTriggersRebalanceAndOthersRejoinNextGeneration() {
        List<JoinGroupResponseData> rs = formGroup("g", 3);
        String leaving = rs.get(0).memberId();
        LeaveGroupResponseData leave = h.leave("g", Harness.member(leaving));
        assertThat(Errors.forCode(leave.errorCode())).isEqualTo(Errors.NONE);
        assertThat(leave.members()).singleElement().satisfies(m -> assertThat(m.errorCode()).isEqualTo(Errors.NONE.code()));
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);

        // The others learn about the rebalance from their heartbeats and rejoin.
        assertThat(h.heartbeat("g", rs.get(1).memberId(), 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        CompletableFuture<JoinGroupResponseData> j1 = h.join(joinRequest("g", rs.get(1).memberId()));
        assertThat(j1).isNotDone();
        CompletableFuture<JoinGroupResponseData> j2 = h.join(joinRequest("g", rs.get(2).memberId()));
        assertThat(j1).isDone();
        assertThat(j2).isDone();
        assertThat(j1.getNow(null).generationId()).isEqualTo(2);
        syncAll("g", List.of(j1.getNow(null), j2.getNow(null)));
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
        assertThat(h.state.group("g").size()).isEqualTo(2);
    }

    @Test
    void memberRemovedAfterSessionTimeoutTriggersRebalance() {
        List<JoinGroupResponseData> rs = formGroup("g", 2);
        String alive = rs.get(0).memberId();
        String dead = rs.get(1).memberId();
        for (int i = 0; i < 3; i++) {
            h.advance(Harness.SESSION_MS / 3);
            assertThat(h.heartbeat("g", alive, 1)).isEqualTo(Errors.NONE);
        }
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
        h.advance(Harness.SESSION_MS / 3);
        assertThat(h.state.group("g").hasMember(dead)).isFalse();
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);
        assertThat(h.heartbeat("g", dead, 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.heartbeat("g", alive, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        JoinGroupResponseData r = h.join(joinRequest("g", alive)).getNow(null);
        assertThat(r.generationId()).isEqualTo(2);
        assertThat(r.leader()).isEqualTo(alive);
        assertThat(r.members()).hasSize(1);
    }

    @Test
    void heartbeatKeepsMemberAlivePastSessionTimeout() {
        List<JoinGroupResponseData> rs = formGroup("g", 1);
        for (int i = 0; i < 10; i++) {
            h.advance(Harness.SESSION_MS - 1000);
            assertThat(h.heartbeat("g", rs.get(0).memberId(), 1)).isEqualTo(Errors.NONE);
        }
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
    }

    @Test
    void rebalanceTimeoutRemovesMembersThatDidNotRejoin() {
        List<JoinGroupResponseData> rs = formGroup("g", 3);
        String rejoiner = rs.get(0).memberId();
        // A rejoin with changed metadata starts a rebalance; the other two keep heartbeating but never rejoin.
        CompletableFuture<JoinGroupResponseData> j = h.join(joinRequest("g", rejoiner).setProtocols(Harness.protocols("range", "roundrobin")));
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);
        for (int t = 0; t < Harness.REBALANCE_MS - 5000; t += 5000) {
            h.advance(5000);
            assertThat(h.heartbeat("g", rs.get(1).memberId(), 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
            assertThat(h.heartbeat("g", rs.get(2).memberId(), 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        }
        assertThat(j).isNotDone();
        h.advance(5000);
        JoinGroupResponseData r = j.getNow(null);
        assertThat(r.generationId()).isEqualTo(2);
        assertThat(r.members()).extracting(JoinGroupResponseData.JoinGroupResponseMember::memberId).containsExactly(rejoiner);
        assertThat(h.heartbeat("g", rs.get(1).memberId(), 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void initialRebalanceDelayIsExtendedWhileMembersKeepJoiningButBoundedByRebalanceTimeout() {
        CompletableFuture<JoinGroupResponseData> first = h.joinDynamic("g");
        h.advance(2999);
        assertThat(first).isNotDone();
        CompletableFuture<JoinGroupResponseData> second = h.joinDynamic("g");
        h.advance(1);
        assertThat(first).isNotDone(); // extended by another delay because a member joined
        h.advance(2999);
        assertThat(first).isNotDone();
        h.advance(1);
        assertThat(first).isDone();
        assertThat(second.getNow(null).generationId()).isEqualTo(1);
        assertThat(first.getNow(null).members().size() + second.getNow(null).members().size()).isEqualTo(2);
    }

    @Test
    void initialRebalanceDelayNeverExceedsRebalanceTimeout() {
        JoinGroupResponseData id = h.join(joinRequest("g", "")).getNow(null);
        CompletableFuture<JoinGroupResponseData> first = h.join(joinRequest("g", id.memberId()).setRebalanceTimeoutMs(7000));
        long start = h.now();
        // Keep adding members every 2.5 s: the delay keeps extending, but stops within the rebalance timeout.
        while (!first.isDone()) {
            h.join(joinRequest("g", "").setGroupInstanceId("i" + h.now())); // static members join directly
            h.advance(2500);
            assertThat(h.now() - start).isLessThanOrEqualTo(10_000);
        }
        assertThat(first.getNow(null).generationId()).isEqualTo(1);
    }

    @Test
    void leaderRejoinInStableGroupTriggersRebalance() {
        List<JoinGroupResponseData> rs = formGroup("g", 1);
        JoinGroupResponseData r = h.join(joinRequest("g", rs.get(0).memberId())).getNow(null);
        assertThat(r.generationId()).isEqualTo(2);
    }

    @Test
    void followerRejoinWithSameMetadataInStableGroupGetsCurrentGeneration() {
        List<JoinGroupResponseData> rs = formGroup("g", 2);
        JoinGroupResponseData follower = rs.stream().filter(r -> !r.leader().equals(r.memberId())).findFirst().orElseThrow();
        JoinGroupResponseData r = h.join(joinRequest("g", follower.memberId())).getNow(null);
        assertThat(error(r)).isEqualTo(Errors.NONE);
        assertThat(r.generationId()).isEqualTo(1);
        assertThat(r.members()).isEmpty();
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
    }

    @Test
    void memberThatDoesNotSyncWithinRebalanceTimeoutIsRemoved() {
        List<CompletableFuture<JoinGroupResponseData>> joins = List.of(h.joinDynamic("g"), h.joinDynamic("g"));
        h.advance(6000);
        List<JoinGroupResponseData> rs = joins.stream().map(Harness::done).toList();
        JoinGroupResponseData leader = rs.stream().filter(r -> r.leader().equals(r.memberId())).findFirst().orElseThrow();
        JoinGroupResponseData follower = rs.stream().filter(r -> !r.leader().equals(r.memberId())).findFirst().orElseThrow();
        h.sync("g", leader.memberId(), 1, Map.of()).getNow(null);
        for (int t = 0; t < Harness.REBALANCE_MS; t += 5000) {
            h.advance(5000);
            h.heartbeat("g", leader.memberId(), 1);
            h.heartbeat("g", follower.memberId(), 1);
        }
        assertThat(h.state.group("g").hasMember(follower.memberId())).isFalse();
        assertThat(h.state.group("g").hasMember(leader.memberId())).isTrue();
    }

    @Test
    void staticMemberRejoinWithNewMemberIdReplacesOldWithoutRebalance() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        CompletableFuture<JoinGroupResponseData> b = h.joinStatic("g", "", "instance-b");
        h.advance(6000);
        syncAll("g", List.of(a.getNow(null), b.getNow(null)));
        JoinGroupResponseData oldB = a.getNow(null).leader().equals(b.getNow(null).memberId()) ? a.getNow(null) : b.getNow(null);
        String bInstance = oldB == b.getNow(null) ? "instance-b" : "instance-a";
        byte[] assignment = h.sync("g", oldB.memberId(), bInstance, 1, Map.of()).getNow(null).assignment();

        // The instance restarts: it has lost its member id.
        JoinGroupResponseData rejoin = h.joinStatic("g", "", bInstance).getNow(null);
        assertThat(error(rejoin)).isEqualTo(Errors.NONE);
        assertThat(rejoin.memberId()).isNotEqualTo(oldB.memberId());
        assertThat(rejoin.generationId()).isEqualTo(1);
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
        SyncGroupResponseData s = h.sync("g", rejoin.memberId(), bInstance, 1, Map.of()).getNow(null);
        assertThat(error(s)).isEqualTo(Errors.NONE);
        assertThat(s.assignment()).isEqualTo(assignment);

        // The old incarnation is fenced everywhere.
        assertThat(h.heartbeat("g", oldB.memberId(), bInstance, 1)).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(error(h.sync("g", oldB.memberId(), bInstance, 1, Map.of()).getNow(null))).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(error(h.joinStatic("g", oldB.memberId(), bInstance).getNow(null))).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(h.commit(Harness.commitRequest("g", oldB.memberId(), 1, "topic-a", 0, 5).setGroupInstanceId(bInstance))
                .getNow(null).topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.FENCED_INSTANCE_ID.code());
        assertThat(h.heartbeat("g", rejoin.memberId(), bInstance, 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void staticLeaderRejoinOnV9IsToldToSkipAssignment() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        h.advance(3000);
        syncAll("g", List.of(a.getNow(null)));
        JoinGroupResponseData v9 = h.joinStatic("g", "", "instance-a").getNow(null);
        assertThat(v9.skipAssignment()).isTrue();
        assertThat(v9.leader()).isEqualTo(v9.memberId());
        assertThat(v9.members()).hasSize(1);

        JoinGroupResponseData v8 = h.join(joinRequest("g", "").setGroupInstanceId("instance-a"), (short) 8).getNow(null);
        assertThat(v8.skipAssignment()).isFalse();
        assertThat(v8.leader()).isEqualTo(v9.memberId()); // the previous id: the client does not think it leads
        assertThat(v8.members()).isEmpty();
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
    }

    @Test
    void staticMemberRejoinWithDifferentProtocolTriggersRebalance() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        h.advance(3000);
        syncAll("g", List.of(a.getNow(null)));
        CompletableFuture<JoinGroupResponseData> r = h.join(joinRequest("g", "").setGroupInstanceId("instance-a")
                .setProtocols(Harness.protocols("roundrobin", "range")));
        assertThat(r.getNow(null).generationId()).isEqualTo(2);
        assertThat(r.getNow(null).protocolName()).isEqualTo("roundrobin");
    }

    @Test
    void staticMemberLeavesByInstanceIdAsAdminDoes() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        h.advance(3000);
        syncAll("g", List.of(a.getNow(null)));
        LeaveGroupResponseData r = h.leave("g", Harness.staticMember("", "instance-a"), Harness.staticMember("", "nobody"),
                Harness.staticMember("wrong-id", "instance-a"));
        assertThat(r.members()).extracting(LeaveGroupResponseData.MemberResponse::errorCode).containsExactly(
                Errors.NONE.code(), Errors.UNKNOWN_MEMBER_ID.code(), Errors.FENCED_INSTANCE_ID.code());
        assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);
        assertThat(h.state.group("g").generationId()).isEqualTo(2);
    }

    @Test
    void leaveWithFencedStaticMemberIdIsRejected() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        h.advance(3000);
        LeaveGroupResponseData r = h.leave("g", Harness.staticMember("stale-id", "instance-a"));
        assertThat(r.members().get(0).errorCode()).isEqualTo(Errors.FENCED_INSTANCE_ID.code());
        assertThat(a.getNow(null).memberId()).isNotEqualTo("stale-id");
    }

    @Test
    void leaveGroupV0ReportsMemberErrorAtTopLevel() {
        LeaveGroupResponseData r = h.state.leaveGroup(new org.apache.kafka.common.message.LeaveGroupRequestData()
                .setGroupId("nope").setMemberId("m"), (short) 2, h.now());
        assertThat(r.errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
        assertThat(r.members()).isEmpty();
    }

    // ------------------------------------------------------------ error codes

    @Test
    void joinErrors() {
        assertThat(error(h.join(joinRequest("", "")).getNow(null))).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(error(h.join(joinRequest("g", "").setSessionTimeoutMs(5999)).getNow(null))).isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        assertThat(error(h.join(joinRequest("g", "").setSessionTimeoutMs(300_001)).getNow(null))).isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        assertThat(error(h.join(joinRequest("g", "ghost")).getNow(null))).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.stateOf("g")).isNull();
        assertThat(error(h.join(joinRequest("g", "").setProtocolType("")).getNow(null))).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);

        formGroup("g", 1);
        assertThat(error(h.join(joinRequest("g", "").setProtocolType("connect")).getNow(null))).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(error(h.join(joinRequest("g", "").setProtocols(Harness.protocols("sticky"))).getNow(null))).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(error(h.join(joinRequest("g", "ghost")).getNow(null))).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void joinBeyondGroupMaxSizeIsRejected() {
        Harness small = new Harness(new GroupConfig(6000, 300_000, 3000, 2, 7L * 24 * 3600 * 1000, 600_000));
        CompletableFuture<JoinGroupResponseData> a = small.joinDynamic("g");
        CompletableFuture<JoinGroupResponseData> b = small.joinDynamic("g");
        JoinGroupResponseData id = small.join(joinRequest("g", "")).getNow(null);
        JoinGroupResponseData c = small.join(joinRequest("g", id.memberId())).getNow(null);
        assertThat(error(c)).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
        small.advance(6000);
        assertThat(a.getNow(null).generationId()).isEqualTo(1);
        assertThat(b.getNow(null).generationId()).isEqualTo(1);
        assertThat(small.state.group("g").size()).isEqualTo(2);
    }

    @Test
    void syncErrors() {
        assertThat(error(h.sync("", "m", 1, Map.of()).getNow(null))).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(error(h.sync("g", "m", 1, Map.of()).getNow(null))).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        List<JoinGroupResponseData> rs = formGroup("g", 1);
        String m = rs.get(0).memberId();
        assertThat(error(h.sync("g", "ghost", 1, Map.of()).getNow(null))).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(error(h.sync("g", m, 7, Map.of()).getNow(null))).isEqualTo(Errors.ILLEGAL_GENERATION);
        SyncGroupResponseData wrongProtocol = h.state.syncGroup(new org.apache.kafka.common.message.SyncGroupRequestData()
                .setGroupId("g").setMemberId(m).setGenerationId(1).setProtocolType("consumer").setProtocolName("roundrobin"),
                (short) 5, h.now()).getNow(null);
        assertThat(error(wrongProtocol)).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);

        // While a rebalance is in progress, a sync for the old generation is told to rejoin.
        formGroup("h", 2);
        String hm = h.state.group("h").members().iterator().next().memberId();
        h.leave("h", Harness.member(h.state.group("h").members().stream().filter(x -> !x.memberId().equals(hm)).findFirst().orElseThrow().memberId()));
        assertThat(error(h.sync("h", hm, 1, Map.of()).getNow(null))).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void heartbeatErrors() {
        assertThat(h.heartbeat("", "m", 1)).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(h.heartbeat("g", "m", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        List<JoinGroupResponseData> rs = formGroup("g", 1);
        assertThat(h.heartbeat("g", "ghost", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.heartbeat("g", rs.get(0).memberId(), 0)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(h.heartbeat("g", rs.get(0).memberId(), "unknown-instance", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void heartbeatDuringCompletingRebalanceIsAccepted() {
        CompletableFuture<JoinGroupResponseData> j = h.joinDynamic("g");
        h.advance(3000);
        assertThat(h.stateOf("g")).isEqualTo(GroupState.COMPLETING_REBALANCE);
        assertThat(h.heartbeat("g", j.getNow(null).memberId(), 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void pendingMemberThatNeverRejoinsIsForgottenAfterSessionTimeout() {
        List<JoinGroupResponseData> rs = formGroup("g", 1);
        String m = rs.get(0).memberId();
        JoinGroupResponseData pending = h.join(joinRequest("g", "")).getNow(null);
        assertThat(h.state.group("g").isPendingMember(pending.memberId())).isTrue();
        h.advance(Harness.SESSION_MS / 2);
        h.heartbeat("g", m, 1);
        h.advance(Harness.SESSION_MS / 2);
        assertThat(h.state.group("g").isPendingMember(pending.memberId())).isFalse();
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
    }

    @Test
    void lastMemberLeavingMakesGroupEmptyWithNextGeneration() {
        List<JoinGroupResponseData> rs = formGroup("g", 1);
        h.leave("g", Harness.member(rs.get(0).memberId()));
        assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);
        assertThat(h.state.group("g").generationId()).isEqualTo(2);
    }

    @Test
    void protocolIsChosenByVoteAmongProtocolsEveryMemberSupports() {
        JoinGroupResponseData id1 = h.join(joinRequest("g", "")).getNow(null);
        JoinGroupResponseData id2 = h.join(joinRequest("g", "")).getNow(null);
        JoinGroupResponseData id3 = h.join(joinRequest("g", "")).getNow(null);
        CompletableFuture<JoinGroupResponseData> a = h.join(joinRequest("g", id1.memberId()).setProtocols(Harness.protocols("range", "sticky")));
        CompletableFuture<JoinGroupResponseData> b = h.join(joinRequest("g", id2.memberId()).setProtocols(Harness.protocols("sticky", "range", "roundrobin")));
        CompletableFuture<JoinGroupResponseData> c = h.join(joinRequest("g", id3.memberId()).setProtocols(Harness.protocols("roundrobin", "sticky", "range")));
        h.advance(6000);
        // Candidates: range, sticky. Votes: a->range, b->sticky, c->sticky.
        assertThat(a.getNow(null).protocolName()).isEqualTo("sticky");
        assertThat(c.getNow(null).protocolName()).isEqualTo("sticky");
        assertThat(b.getNow(null).protocolName()).isEqualTo("sticky");
    }

    @Test
    void newMemberJoiningDuringCompletingRebalanceFailsParkedSyncsWithRebalanceInProgress() {
        CompletableFuture<JoinGroupResponseData> a = h.joinDynamic("g");
        CompletableFuture<JoinGroupResponseData> b = h.joinDynamic("g");
        h.advance(3000);
        h.advance(3000);
        JoinGroupResponseData follower = Harness.done(a).leader().equals(Harness.done(a).memberId()) ? Harness.done(b) : Harness.done(a);
        CompletableFuture<SyncGroupResponseData> parkedSync = h.sync("g", follower.memberId(), 1, Map.of());
        assertThat(parkedSync).isNotDone();
        CompletableFuture<JoinGroupResponseData> c = h.joinDynamic("g");
        assertThat(error(Harness.done(parkedSync))).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);
        assertThat(c).isNotDone();
    }

    @Test
    void memberParkedInJoinIsNotExpiredBySessionTimeout() {
        List<JoinGroupResponseData> rs = formGroup("g", 2);
        // One member rejoins (with new metadata) and waits for the other, which keeps heartbeating.
        CompletableFuture<JoinGroupResponseData> j = h.join(joinRequest("g", rs.get(0).memberId())
                .setProtocols(Harness.protocols("range", "sticky")));
        for (int t = 0; t < 2 * Harness.SESSION_MS; t += 2000) {
            h.advance(2000);
            h.heartbeat("g", rs.get(1).memberId(), 1);
        }
        assertThat(h.state.group("g").hasMember(rs.get(0).memberId())).isTrue();
        CompletableFuture<JoinGroupResponseData> other = h.join(joinRequest("g", rs.get(1).memberId()));
        assertThat(Harness.done(j).generationId()).isEqualTo(2);
        assertThat(Harness.done(other).generationId()).isEqualTo(2);
    }

    @Test
    void describeShowsStaticMembersInstanceIds() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        h.advance(3000);
        syncAll("g", List.of(Harness.done(a)));
        var described = h.state.describeGroups(new org.apache.kafka.common.message.DescribeGroupsRequestData()
                .setGroups(List.of("g")), (short) 5).groups().get(0);
        assertThat(described.members()).singleElement().satisfies(m -> assertThat(m.groupInstanceId()).isEqualTo("instance-a"));
    }

    @Test
    void staticMemberThatStopsHeartbeatingIsRemovedAfterSessionTimeout() {
        CompletableFuture<JoinGroupResponseData> a = h.joinStatic("g", "", "instance-a");
        h.advance(3000);
        syncAll("g", List.of(Harness.done(a)));
        h.advance(Harness.SESSION_MS);
        assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);
        assertThat(h.state.group("g").staticMemberId("instance-a")).isNull();
    }
}
