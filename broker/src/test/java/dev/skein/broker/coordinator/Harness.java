package dev.skein.broker.coordinator;

import dev.skein.broker.testing.ManualTime;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;

/**
 * Drives a {@link CoordinatorState} on the test thread with a manual clock and an in-memory store
 * (a direct executor: store continuations run in the thread that completes the append).
 */
final class Harness {
    static final int SESSION_MS = 10_000;
    static final int REBALANCE_MS = 30_000;
    static final GroupConfig CONFIG = new GroupConfig(6000, 300_000, 3000, Integer.MAX_VALUE, 7L * 24 * 3600 * 1000, 600_000);

    final ManualTime time = new ManualTime();
    final InMemoryOffsetStore store;
    final GroupConfig config;
    final CoordinatorState state;

    Harness() {
        this(CONFIG, new InMemoryOffsetStore());
    }

    Harness(GroupConfig config) {
        this(config, new InMemoryOffsetStore());
    }

    Harness(GroupConfig config, InMemoryOffsetStore store) {
        this.config = config;
        this.store = store;
        this.state = new CoordinatorState(config, store, time, Runnable::run);
        store.load(r -> state.replay(r, time.milliseconds()));
        state.onLoaded(time.milliseconds());
    }

    long now() {
        return time.milliseconds();
    }

    /** Moves the clock, firing each timer at its own deadline (as the coordinator thread would). */
    void advance(long ms) {
        long target = now() + ms;
        while (true) {
            long waitMs = state.poll(now());
            if (waitMs == Long.MAX_VALUE || now() + waitMs > target) {
                break;
            }
            time.advance(waitMs);
        }
        time.advance(target - now());
        state.poll(now());
    }

    /** The result of a future that must already be complete (tests never block). */
    static <T> T done(CompletableFuture<T> f) {
        assertThat(f).isDone();
        return f.join();
    }

    static byte[] subscription(String... topics) {
        ByteBuffer b = ConsumerProtocol.serializeSubscription(new ConsumerPartitionAssignor.Subscription(List.of(topics)));
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols(String... namesThenNothing) {
        JoinGroupRequestData.JoinGroupRequestProtocolCollection c = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        for (String name : namesThenNothing) {
            c.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName(name).setMetadata(subscription("topic-a")));
        }
        return c;
    }

    static JoinGroupRequestData joinRequest(String groupId, String memberId) {
        return new JoinGroupRequestData()
                .setGroupId(groupId)
                .setMemberId(memberId)
                .setProtocolType("consumer")
                .setProtocols(protocols("range"))
                .setSessionTimeoutMs(SESSION_MS)
                .setRebalanceTimeoutMs(REBALANCE_MS);
    }

    CompletableFuture<JoinGroupResponseData> join(JoinGroupRequestData req) {
        return join(req, (short) 9);
    }

    CompletableFuture<JoinGroupResponseData> join(JoinGroupRequestData req, short version) {
        return state.joinGroup(req, version, "client", "/127.0.0.1", now());
    }

    /** KIP-394 handshake: the first JoinGroup gets MEMBER_ID_REQUIRED and the member id; the second is parked. */
    CompletableFuture<JoinGroupResponseData> joinDynamic(String groupId) {
        JoinGroupResponseData first = done(join(joinRequest(groupId, "")));
        assertThat(Errors.forCode(first.errorCode())).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        return join(joinRequest(groupId, first.memberId()));
    }

    CompletableFuture<JoinGroupResponseData> joinStatic(String groupId, String memberId, String instanceId) {
        return join(joinRequest(groupId, memberId).setGroupInstanceId(instanceId));
    }

    CompletableFuture<SyncGroupResponseData> sync(String groupId, String memberId, int generation, Map<String, byte[]> assignments) {
        return sync(groupId, memberId, null, generation, assignments);
    }

    CompletableFuture<SyncGroupResponseData> sync(String groupId, String memberId, String instanceId, int generation,
                                                  Map<String, byte[]> assignments) {
        List<SyncGroupRequestData.SyncGroupRequestAssignment> list = new ArrayList<>();
        assignments.forEach((m, a) -> list.add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(m).setAssignment(a)));
        return state.syncGroup(new SyncGroupRequestData()
                .setGroupId(groupId)
                .setMemberId(memberId)
                .setGroupInstanceId(instanceId)
                .setGenerationId(generation)
                .setProtocolType("consumer")
                .setProtocolName("range")
                .setAssignments(list), (short) 5, now());
    }

    Errors heartbeat(String groupId, String memberId, int generation) {
        return heartbeat(groupId, memberId, null, generation);
    }

    Errors heartbeat(String groupId, String memberId, String instanceId, int generation) {
        return Errors.forCode(state.heartbeat(new HeartbeatRequestData()
                .setGroupId(groupId).setMemberId(memberId).setGroupInstanceId(instanceId).setGenerationId(generation),
                (short) 4, now()).errorCode());
    }

    LeaveGroupResponseData leave(String groupId, LeaveGroupRequestData.MemberIdentity... members) {
        return state.leaveGroup(new LeaveGroupRequestData().setGroupId(groupId).setMembers(List.of(members)), (short) 5, now());
    }

    static LeaveGroupRequestData.MemberIdentity member(String memberId) {
        return new LeaveGroupRequestData.MemberIdentity().setMemberId(memberId);
    }

    static LeaveGroupRequestData.MemberIdentity staticMember(String memberId, String instanceId) {
        return new LeaveGroupRequestData.MemberIdentity().setMemberId(memberId).setGroupInstanceId(instanceId);
    }

    static OffsetCommitRequestData commitRequest(String groupId, String memberId, int generation, String topic, int partition, long offset) {
        return new OffsetCommitRequestData()
                .setGroupId(groupId)
                .setMemberId(memberId)
                .setGenerationIdOrMemberEpoch(generation)
                .setTopics(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic()
                        .setName(topic)
                        .setPartitions(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                                .setPartitionIndex(partition)
                                .setCommittedOffset(offset)
                                .setCommittedLeaderEpoch(3)
                                .setCommittedMetadata("meta")))))));
    }

    CompletableFuture<OffsetCommitResponseData> commit(OffsetCommitRequestData req) {
        return state.commitOffsets(req, (short) 9, now());
    }

    /** Commits one offset and returns the partition's error. */
    Errors commit(String groupId, String memberId, int generation, String topic, int partition, long offset) {
        OffsetCommitResponseData r = done(commit(commitRequest(groupId, memberId, generation, topic, partition, offset)));
        return Errors.forCode(r.topics().get(0).partitions().get(0).errorCode());
    }

    /** The committed offset of one partition via OffsetFetch v9 (-1 if none). */
    long committed(String groupId, String topic, int partition) {
        OffsetFetchResponseData r = state.fetchOffsets(new OffsetFetchRequestData().setGroups(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(groupId).setTopics(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(topic).setPartitionIndexes(List.of(partition)))))),
                (short) 9);
        OffsetFetchResponseData.OffsetFetchResponsePartitions p = r.groups().get(0).topics().get(0).partitions().get(0);
        assertThat(Errors.forCode(p.errorCode())).isEqualTo(Errors.NONE);
        return p.committedOffset();
    }

    GroupState stateOf(String groupId) {
        return state.groupState(groupId);
    }

    static Errors error(JoinGroupResponseData r) {
        return Errors.forCode(r.errorCode());
    }

    static Errors error(SyncGroupResponseData r) {
        return Errors.forCode(r.errorCode());
    }
}
