package dev.skein.broker.coordinator;

import static dev.skein.broker.coordinator.Harness.done;
import static dev.skein.broker.coordinator.Harness.joinRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every response the coordinator produces must be encodable at the request's version: a field a
 * version cannot carry (non-ignorable, non-default) makes the generated codec throw.
 */
@Timeout(30)
class WireVersionsTest {
    private static final Uuid TOPIC_ID = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");

    private static void encodes(Message m, short version) {
        assertThatCode(() -> MessageUtil.toByteBufferAccessor(m, version)).as("%s v%d", m.getClass().getSimpleName(), version)
                .doesNotThrowAnyException();
    }

    private static Harness stable(String groupId, short joinVersion) {
        Harness h = new Harness();
        h.state.setTopicIds(id -> id.equals(TOPIC_ID) ? "topic-a" : null, name -> name.equals("topic-a") ? TOPIC_ID : Uuid.ZERO_UUID);
        CompletableFuture<JoinGroupResponseData> j = h.join(joinRequest(groupId, ""), joinVersion);
        if (joinVersion >= 4) {
            JoinGroupResponseData first = done(j);
            assertThat(first.errorCode()).isEqualTo(Errors.MEMBER_ID_REQUIRED.code());
            encodes(first, joinVersion);
            j = h.join(joinRequest(groupId, first.memberId()), joinVersion);
        }
        h.advance(3000);
        encodes(done(j), joinVersion);
        return h;
    }

    @Test
    void joinSyncHeartbeatLeaveEncodeAtEveryVersion() {
        for (short v = JoinGroupRequestData.LOWEST_SUPPORTED_VERSION; v <= JoinGroupRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            Harness h = stable("g", v);
            String m = h.state.group("g").leaderId();
            short syncVersion = (short) Math.min(v, SyncGroupRequestData.HIGHEST_SUPPORTED_VERSION);
            SyncGroupResponseData s = done(h.state.syncGroup(new SyncGroupRequestData().setGroupId("g").setMemberId(m).setGenerationId(1)
                    .setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(m).setAssignment(new byte[]{1}))),
                    syncVersion, h.now()));
            assertThat(s.errorCode()).isEqualTo(Errors.NONE.code());
            encodes(s, syncVersion);
            short hbVersion = (short) Math.min(v, HeartbeatRequestData.HIGHEST_SUPPORTED_VERSION);
            encodes(h.state.heartbeat(new HeartbeatRequestData().setGroupId("g").setMemberId(m).setGenerationId(1), hbVersion, h.now()), hbVersion);
            // Errors too: the join error shape must fit every version.
            encodes(done(h.join(joinRequest("g", "ghost"), v)), v);
        }
        for (short v = LeaveGroupRequestData.LOWEST_SUPPORTED_VERSION; v <= LeaveGroupRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            Harness h = stable("g", (short) 5);
            String m = h.state.group("g").leaderId();
            LeaveGroupRequestData req = v >= 3
                    ? new LeaveGroupRequestData().setGroupId("g").setMembers(List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(m)))
                    : new LeaveGroupRequestData().setGroupId("g").setMemberId(m);
            LeaveGroupResponseData r = h.state.leaveGroup(req, v, h.now());
            encodes(r, v);
            assertThat(r.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);
        }
    }

    @Test
    void offsetCommitAndFetchEncodeAtEveryVersion() {
        for (short v = OffsetCommitRequestData.LOWEST_SUPPORTED_VERSION; v <= OffsetCommitRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            Harness h = stable("g", (short) 9);
            String m = h.state.group("g").leaderId();
            done(h.sync("g", m, 1, Map.of()));
            OffsetCommitRequestData req = Harness.commitRequest("g", m, 1, "topic-a", 0, 10 + v);
            if (v >= 10) {
                req.topics().get(0).setName("").setTopicId(TOPIC_ID);
            }
            OffsetCommitResponseData r = done(h.state.commitOffsets(req, v, h.now()));
            encodes(r, v);
            assertThat(r.topics().get(0).partitions().get(0).errorCode()).as("commit v%d", v).isEqualTo(Errors.NONE.code());
            assertThat(h.committed("g", "topic-a", 0)).isEqualTo(10 + v);
            encodes(ErrorResponses.commit(req, v, Errors.NOT_COORDINATOR), v);
        }
        Harness h = new Harness();
        h.state.setTopicIds(id -> id.equals(TOPIC_ID) ? "topic-a" : null, name -> name.equals("topic-a") ? TOPIC_ID : Uuid.ZERO_UUID);
        h.commit("g", "", -1, "topic-a", 0, 77);
        for (short v = OffsetFetchRequestData.LOWEST_SUPPORTED_VERSION; v <= OffsetFetchRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            OffsetFetchRequestData req;
            if (v >= 8) {
                OffsetFetchRequestData.OffsetFetchRequestTopics t = new OffsetFetchRequestData.OffsetFetchRequestTopics().setPartitionIndexes(List.of(0));
                if (v >= 10) {
                    t.setTopicId(TOPIC_ID);
                } else {
                    t.setName("topic-a");
                }
                req = new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g").setTopics(List.of(t))));
            } else {
                req = new OffsetFetchRequestData().setGroupId("g").setTopics(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("topic-a").setPartitionIndexes(List.of(0))));
            }
            OffsetFetchResponseData r = h.state.fetchOffsets(req, v);
            encodes(r, v);
            long offset = v >= 8 ? r.groups().get(0).topics().get(0).partitions().get(0).committedOffset()
                    : r.topics().get(0).partitions().get(0).committedOffset();
            assertThat(offset).as("fetch v%d", v).isEqualTo(77);
            encodes(ErrorResponses.fetch(req, v, Errors.COORDINATOR_LOAD_IN_PROGRESS), v);
        }
    }

    @Test
    void adminApisEncodeAtEveryVersion() {
        Harness h = stable("g", (short) 9);
        h.commit("simple", "", -1, "topic-a", 0, 1);
        for (short v = ListGroupsRequestData.LOWEST_SUPPORTED_VERSION; v <= ListGroupsRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            ListGroupsResponseData r = h.state.listGroups(new ListGroupsRequestData(), v);
            encodes(r, v);
            assertThat(r.groups()).hasSize(2);
        }
        for (short v = DescribeGroupsRequestData.LOWEST_SUPPORTED_VERSION; v <= DescribeGroupsRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            DescribeGroupsRequestData req = new DescribeGroupsRequestData().setGroups(List.of("g", "simple", "unknown"));
            encodes(h.state.describeGroups(req, v), v);
            encodes(ErrorResponses.describeGroups(req, Errors.NOT_COORDINATOR), v);
        }
        for (short v = DeleteGroupsRequestData.LOWEST_SUPPORTED_VERSION; v <= DeleteGroupsRequestData.HIGHEST_SUPPORTED_VERSION; v++) {
            DeleteGroupsResponseData r = done(h.state.deleteGroups(new DeleteGroupsRequestData().setGroupsNames(new ArrayList<>(List.of("g", "x"))), v, h.now()));
            encodes(r, v);
        }
        OffsetDeleteResponseData od = done(h.state.deleteOffsets(OffsetCommitTest.deleteRequest("simple", "topic-a"), (short) 0, h.now()));
        encodes(od, (short) 0);
    }
}
