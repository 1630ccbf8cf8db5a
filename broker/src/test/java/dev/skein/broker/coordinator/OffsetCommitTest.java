package dev.skein.broker.coordinator;

import static dev.skein.broker.coordinator.Harness.done;
import static dev.skein.broker.coordinator.Harness.joinRequest;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class OffsetCommitTest {
    private final Harness h = new Harness();

    /** A Stable single-member consumer group subscribed to topic-a; returns the member id. */
    private String stableGroup(String groupId) {
        CompletableFuture<JoinGroupResponseData> j = h.joinDynamic(groupId);
        h.advance(3000);
        String m = done(j).memberId();
        done(h.sync(groupId, m, 1, Map.of(m, new byte[0])));
        assertThat(h.stateOf(groupId)).isEqualTo(GroupState.STABLE);
        return m;
    }

    @Test
    void memberCommitIsFetchedBack() {
        String m = stableGroup("g");
        assertThat(h.commit("g", m, 1, "topic-a", 0, 42)).isEqualTo(Errors.NONE);
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(42);
        assertThat(h.committed("g", "topic-a", 1)).isEqualTo(-1);
        assertThat(h.committed("other", "topic-a", 0)).isEqualTo(-1);
    }

    @Test
    void commitIsAnsweredOnlyAfterTheStoreMadeItDurable() {
        String m = stableGroup("g");
        h.store.holdAppends();
        CompletableFuture<OffsetCommitResponseData> f = h.commit(Harness.commitRequest("g", m, 1, "topic-a", 0, 7));
        assertThat(f).isNotDone();
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(-1);
        h.store.releaseAppends();
        assertThat(done(f).topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(7);
    }

    @Test
    void failedStoreAppendFailsTheCommit() {
        String m = stableGroup("g");
        h.store.failNextAppend(new org.apache.kafka.common.errors.NotLeaderOrFollowerException("moved"));
        assertThat(h.commit("g", m, 1, "topic-a", 0, 7)).isEqualTo(Errors.NOT_COORDINATOR);
        h.store.failNextAppend(new org.apache.kafka.common.errors.RecordTooLargeException("big"));
        assertThat(h.commit("g", m, 1, "topic-a", 0, 7)).isEqualTo(Errors.INVALID_COMMIT_OFFSET_SIZE);
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(-1);
    }

    @Test
    void commitWithWrongGenerationOrUnknownMemberIsRejected() {
        String m = stableGroup("g");
        assertThat(h.commit("g", m, 0, "topic-a", 0, 1)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(h.commit("g", "ghost", 1, "topic-a", 0, 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(h.commit("", m, 1, "topic-a", 0, 1)).isEqualTo(Errors.INVALID_GROUP_ID);
    }

    @Test
    void commitToMissingGroupWithGenerationIsIllegalGenerationBeforeV9AndGroupIdNotFoundAfter() {
        OffsetCommitRequestData req = Harness.commitRequest("nope", "m", 3, "topic-a", 0, 1);
        assertThat(done(h.state.commitOffsets(req, (short) 8, h.now())).topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.ILLEGAL_GENERATION.code());
        assertThat(done(h.state.commitOffsets(req, (short) 9, h.now())).topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(h.stateOf("nope")).isNull();
    }

    @Test
    void commitDuringCompletingRebalanceIsRebalanceInProgress() {
        CompletableFuture<JoinGroupResponseData> j = h.joinDynamic("g");
        h.advance(3000);
        assertThat(h.stateOf("g")).isEqualTo(GroupState.COMPLETING_REBALANCE);
        assertThat(h.commit("g", done(j).memberId(), 1, "topic-a", 0, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void commitDuringPreparingRebalanceWithCurrentGenerationIsAccepted() {
        String m = stableGroup("g");
        done(h.join(joinRequest("g", "")));
        JoinGroupResponseData id = done(h.join(joinRequest("g", "")));
        h.join(joinRequest("g", id.memberId()));
        assertThat(h.stateOf("g")).isEqualTo(GroupState.PREPARING_REBALANCE);
        // Consumers commit in onPartitionsRevoked while the group prepares to rebalance.
        assertThat(h.commit("g", m, 1, "topic-a", 0, 9)).isEqualTo(Errors.NONE);
    }

    @Test
    void adminCommitCreatesSimpleGroupAndIsAllowedOnlyWhileGroupIsEmpty() {
        // AdminClient.alterConsumerGroupOffsets: generation -1, no member id.
        assertThat(h.commit("simple", "", -1, "topic-a", 0, 5)).isEqualTo(Errors.NONE);
        assertThat(h.stateOf("simple")).isEqualTo(GroupState.EMPTY);
        assertThat(h.committed("simple", "topic-a", 0)).isEqualTo(5);

        stableGroup("active");
        assertThat(h.commit("active", "", -1, "topic-a", 0, 5)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void commitOfTooLongMetadataFailsThatPartitionOnly() {
        OffsetCommitRequestData req = Harness.commitRequest("g", "", -1, "topic-a", 0, 5);
        req.topics().get(0).partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                .setPartitionIndex(1).setCommittedOffset(6).setCommittedMetadata("x".repeat(4097)));
        OffsetCommitResponseData r = done(h.commit(req));
        assertThat(r.topics().get(0).partitions()).extracting(OffsetCommitResponseData.OffsetCommitResponsePartition::errorCode)
                .containsExactly(Errors.NONE.code(), Errors.OFFSET_METADATA_TOO_LARGE.code());
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(5);
        assertThat(h.committed("g", "topic-a", 1)).isEqualTo(-1);
    }

    @Test
    void commitToUnknownPartitionIsUnknownTopicOrPartition() {
        h.state.setPartitionExists((topic, partition) -> topic.equals("topic-a") && partition < 2);
        assertThat(h.commit("g", "", -1, "topic-a", 1, 5)).isEqualTo(Errors.NONE);
        assertThat(h.commit("g", "", -1, "topic-a", 2, 5)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(h.commit("g", "", -1, "missing", 0, 5)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }

    @Test
    void fetchV1ToV7AnswersSingleGroupWithLeaderEpochAndMetadata() {
        h.commit("g", "", -1, "topic-a", 0, 5);
        OffsetFetchResponseData r = h.state.fetchOffsets(new OffsetFetchRequestData().setGroupId("g").setTopics(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("topic-a").setPartitionIndexes(List.of(0, 1)))), (short) 7);
        assertThat(r.groups()).isEmpty();
        assertThat(r.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(r.topics().get(0).partitions()).satisfiesExactly(
                p -> {
                    assertThat(p.committedOffset()).isEqualTo(5);
                    assertThat(p.committedLeaderEpoch()).isEqualTo(3);
                    assertThat(p.metadata()).isEqualTo("meta");
                },
                p -> {
                    assertThat(p.committedOffset()).isEqualTo(-1);
                    assertThat(p.metadata()).isEqualTo("");
                    assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
                });
    }

    @Test
    void fetchWithNullTopicsReturnsAllOffsetsOfTheGroup() {
        h.commit("g", "", -1, "topic-a", 0, 5);
        h.commit("g", "", -1, "topic-b", 3, 6);
        OffsetFetchResponseData v7 = h.state.fetchOffsets(new OffsetFetchRequestData().setGroupId("g").setTopics(null), (short) 7);
        assertThat(v7.topics()).extracting(OffsetFetchResponseData.OffsetFetchResponseTopic::name).containsExactly("topic-a", "topic-b");
        OffsetFetchResponseData v8 = h.state.fetchOffsets(new OffsetFetchRequestData().setGroups(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g").setTopics(null),
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("unknown").setTopics(null))), (short) 8);
        assertThat(v8.topics()).isEmpty();
        assertThat(v8.groups()).hasSize(2);
        assertThat(v8.groups().get(0).topics()).hasSize(2);
        assertThat(v8.groups().get(1).topics()).isEmpty();
        assertThat(v8.groups().get(1).errorCode()).isEqualTo(Errors.NONE.code());
    }

    @Test
    void fetchWithEmptyGroupIdIsAnsweredAsAnUnknownGroup() {
        OffsetFetchResponseData r = h.state.fetchOffsets(new OffsetFetchRequestData().setGroupId("").setTopics(null), (short) 5);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(r.topics()).isEmpty();
        OffsetFetchResponseData v8 = h.state.fetchOffsets(new OffsetFetchRequestData().setGroups(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(null).setTopics(null))), (short) 8);
        assertThat(v8.groups().get(0).errorCode()).isEqualTo(Errors.INVALID_GROUP_ID.code());
    }

    @Test
    void offsetCommitV2RetentionTimeSetsExplicitExpiry() {
        OffsetCommitRequestData req = Harness.commitRequest("g", "", -1, "topic-a", 0, 5).setRetentionTimeMs(1000);
        done(h.state.commitOffsets(req, (short) 2, h.now()));
        h.advance(h.config.offsetsRetentionCheckIntervalMs());
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(-1);
    }

    @Test
    void offsetsOfEmptyGroupExpireAfterRetentionSinceGroupBecameEmpty() {
        String m = stableGroup("g");
        h.commit("g", m, 1, "topic-a", 0, 5);
        h.advance(h.config.offsetsRetentionMs()); // keeps heartbeating? no: the member's session expires, group goes Empty
        assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(5); // retention counts from when the group became Empty
        h.advance(Harness.SESSION_MS + h.config.offsetsRetentionCheckIntervalMs());
        assertThat(h.stateOf("g")).isNull(); // offsets expired, then the empty group was deleted
        assertThat(h.store.decoded()).anySatisfy(d -> {
            assertThat(d).isInstanceOf(CoordinatorRecords.OffsetRecord.class);
            assertThat(((CoordinatorRecords.OffsetRecord) d).value()).isNull();
        });
    }

    @Test
    void simpleGroupOffsetsExpireByCommitTimestamp() {
        h.commit("g", "", -1, "topic-a", 0, 5);
        h.advance(h.config.offsetsRetentionMs() - h.config.offsetsRetentionCheckIntervalMs());
        h.commit("g", "", -1, "topic-a", 1, 6);
        h.advance(h.config.offsetsRetentionCheckIntervalMs());
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(-1);
        assertThat(h.committed("g", "topic-a", 1)).isEqualTo(6);
    }

    @Test
    void emptyGroupWithoutOffsetsIsRemovedAtNextExpiryCheck() {
        JoinGroupResponseData id = done(h.join(joinRequest("g", "")));
        h.advance(Harness.SESSION_MS); // the pending member never comes back
        assertThat(h.stateOf("g")).isEqualTo(GroupState.EMPTY);
        h.advance(h.config.offsetsRetentionCheckIntervalMs());
        assertThat(h.stateOf("g")).isNull();
        assertThat(id.memberId()).isNotEmpty();
    }

    @Test
    void subscribedTopicOffsetsDoNotExpireInStableGroup() {
        String m = stableGroup("g");
        h.commit("g", m, 1, "topic-a", 0, 5);
        h.commit("g", m, 1, "topic-other", 0, 6);
        for (long t = 0; t < h.config.offsetsRetentionMs() + h.config.offsetsRetentionCheckIntervalMs(); t += 5000) {
            h.advance(5000);
            h.heartbeat("g", m, 1);
        }
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(5);
        assertThat(h.committed("g", "topic-other", 0)).isEqualTo(-1);
    }

    @Test
    void deleteOffsetsOfTopicNotSubscribedWritesTombstones() {
        String m = stableGroup("g");
        h.commit("g", m, 1, "topic-a", 0, 5);
        h.commit("g", m, 1, "topic-b", 0, 6);
        OffsetDeleteResponseData r = done(h.state.deleteOffsets(deleteRequest("g", "topic-a", "topic-b"), (short) 0, h.now()));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(r.topics().find("topic-a").partitions().find(0).errorCode()).isEqualTo(Errors.GROUP_SUBSCRIBED_TO_TOPIC.code());
        assertThat(r.topics().find("topic-b").partitions().find(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(h.committed("g", "topic-a", 0)).isEqualTo(5);
        assertThat(h.committed("g", "topic-b", 0)).isEqualTo(-1);
    }

    @Test
    void deleteOffsetsErrors() {
        assertThat(done(h.state.deleteOffsets(deleteRequest("nope", "t"), (short) 0, h.now())).errorCode())
                .isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(done(h.state.deleteOffsets(deleteRequest("", "t"), (short) 0, h.now())).errorCode())
                .isEqualTo(Errors.INVALID_GROUP_ID.code());
        // An active group that does not use the consumer protocol cannot have offsets deleted.
        JoinGroupResponseData id = done(h.join(joinRequest("connect", "").setProtocolType("connect")));
        CompletableFuture<JoinGroupResponseData> j = h.join(joinRequest("connect", id.memberId()).setProtocolType("connect"));
        h.advance(3000);
        assertThat(done(j).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(done(h.state.deleteOffsets(deleteRequest("connect", "t"), (short) 0, h.now())).errorCode())
                .isEqualTo(Errors.NON_EMPTY_GROUP.code());
    }

    @Test
    void topicDeletionDropsItsOffsetsFromEveryGroup() {
        h.commit("g1", "", -1, "gone", 0, 5);
        h.commit("g2", "", -1, "gone", 1, 5);
        h.commit("g2", "", -1, "kept", 0, 5);
        h.state.onTopicsDeleted(List.of("gone"));
        assertThat(h.committed("g1", "gone", 0)).isEqualTo(-1);
        assertThat(h.committed("g2", "gone", 1)).isEqualTo(-1);
        assertThat(h.committed("g2", "kept", 0)).isEqualTo(5);
        Harness reloaded = new Harness(Harness.CONFIG, h.store);
        assertThat(reloaded.committed("g2", "gone", 1)).isEqualTo(-1);
        assertThat(reloaded.committed("g2", "kept", 0)).isEqualTo(5);
    }

    @Test
    void commitsKeepTheMemberSessionAliveLikeHeartbeats() {
        String m = stableGroup("g");
        for (int i = 0; i < 5; i++) {
            h.advance(Harness.SESSION_MS - 1000);
            assertThat(h.commit("g", m, 1, "topic-a", 0, i)).isEqualTo(Errors.NONE);
        }
        assertThat(h.stateOf("g")).isEqualTo(GroupState.STABLE);
    }

    static OffsetDeleteRequestData deleteRequest(String groupId, String... topics) {
        OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection c = new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
        for (String t : topics) {
            c.add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(t).setPartitions(new ArrayList<>(List.of(
                    new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0)))));
        }
        return new OffsetDeleteRequestData().setGroupId(groupId).setTopics(c);
    }
}
