package dev.skein.broker.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.FetchRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The follower's side of a fetch session, request by request: what a full and an incremental fetch
 * carry, what is forgotten, and how each way a session ends leads to a full fetch. Every request is
 * also encoded and decoded at its version, so it is one the leader can read.
 */
class FollowerFetchSessionTest {
    private static final Uuid A = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");
    private static final Uuid B = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAg");
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition B0 = new TopicPartition("b", 0);
    private static final short V = 17;

    /** a-0 and b-0 at fixed offsets: a round in which nothing moved. */
    private static final Map<TopicPartition, FetchRequest.PartitionData> BOTH = of(A0, data(A, 10), B0, data(B, 30));

    private static FetchRequest.PartitionData data(Uuid topicId, long offset) {
        return new FetchRequest.PartitionData(topicId, offset, 0, 1 << 20, Optional.of(3), Optional.of(2));
    }

    /** One round: the partitions added, the request built, encoded and decoded at {@code version}. */
    private static FetchRequestData round(FollowerFetchSession s, short version, Map<TopicPartition, FetchRequest.PartitionData> adds) {
        s.begin();
        adds.forEach(s::add);
        FetchRequestData built = s.build(500, 1, 10 << 20);
        ByteBufferAccessor wire = MessageUtil.toByteBufferAccessor(built, version);
        return new FetchRequestData(new ByteBufferAccessor(wire.buffer()), version);
    }

    private static Map<TopicPartition, FetchRequest.PartitionData> of(Object... tpAndData) {
        Map<TopicPartition, FetchRequest.PartitionData> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < tpAndData.length; i += 2) {
            m.put((TopicPartition) tpAndData[i], (FetchRequest.PartitionData) tpAndData[i + 1]);
        }
        return m;
    }

    /** "topicId-partition@offset" of each partition a request sends, sorted. */
    private static List<String> sent(FetchRequestData r) {
        List<String> out = new ArrayList<>();
        for (FetchRequestData.FetchTopic t : r.topics()) {
            for (FetchRequestData.FetchPartition p : t.partitions()) {
                out.add((t.topicId().equals(Uuid.ZERO_UUID) ? t.topic() : t.topicId().toString()) + "-" + p.partition()
                        + "@" + p.fetchOffset());
            }
        }
        out.sort(null);
        return out;
    }

    private static List<String> forgotten(FetchRequestData r) {
        List<String> out = new ArrayList<>();
        for (FetchRequestData.ForgottenTopic t : r.forgottenTopicsData()) {
            for (int p : t.partitions()) {
                out.add((t.topicId().equals(Uuid.ZERO_UUID) ? t.topic() : t.topicId().toString()) + "-" + p);
            }
        }
        out.sort(null);
        return out;
    }

    /** A leader's answer naming {@code partitions} (by id), in session {@code sessionId}. */
    private static FetchResponseData answer(int sessionId, Errors error, Object... idAndPartition) {
        Map<Uuid, FetchResponseData.FetchableTopicResponse> topics = new TreeMap<>();
        for (int i = 0; i < idAndPartition.length; i += 2) {
            Uuid id = (Uuid) idAndPartition[i];
            topics.computeIfAbsent(id, k -> new FetchResponseData.FetchableTopicResponse().setTopicId(k))
                    .partitions().add(new FetchResponseData.PartitionData().setPartitionIndex((Integer) idAndPartition[i + 1]));
        }
        return new FetchResponseData().setErrorCode(error.code()).setSessionId(sessionId)
                .setResponses(new ArrayList<>(topics.values()));
    }

    @Test
    void aFullFetchOpensTheSessionAndIncrementalOnesSendOnlyWhatMoved() {
        FollowerFetchSession s = new FollowerFetchSession(7, V);
        FetchRequest.PartitionData a0 = data(A, 10);
        FetchRequest.PartitionData a1 = data(A, 20);
        FetchRequest.PartitionData b0 = data(B, 30);

        FetchRequestData first = round(s, V, of(A0, a0, A1, a1, B0, b0));
        assertThat(first.sessionId()).isZero();
        assertThat(first.sessionEpoch()).isZero();
        assertThat(first.replicaState().replicaId()).isEqualTo(7);
        assertThat(sent(first)).containsExactly(A + "-0@10", A + "-1@20", B + "-0@30");
        assertThat(s.handleResponse(answer(42, Errors.NONE, A, 0, A, 1, B, 0))).isTrue();

        // the same data objects again, and an equal copy of one: nothing to send, the leader waits on all
        FetchRequestData idle = round(s, V, of(A0, a0, A1, data(A, 20), B0, b0));
        assertThat(idle.sessionId()).isEqualTo(42);
        assertThat(idle.sessionEpoch()).isEqualTo(1);
        assertThat(idle.topics()).isEmpty();
        assertThat(idle.forgottenTopicsData()).isEmpty();
        assertThat(s.handleResponse(answer(42, Errors.NONE, A, 0))).isTrue();

        FetchRequestData moved = round(s, V, of(A0, a0, A1, data(A, 25), B0, b0));
        assertThat(moved.sessionEpoch()).isEqualTo(2);
        assertThat(sent(moved)).containsExactly(A + "-1@25");
        FetchRequestData.FetchPartition p = moved.topics().get(0).partitions().get(0);
        assertThat(p.currentLeaderEpoch()).isEqualTo(3);
        assertThat(p.lastFetchedEpoch()).isEqualTo(2);
        assertThat(p.partitionMaxBytes()).isEqualTo(1 << 20);
        assertThat(moved.maxWaitMs()).isEqualTo(500);
        assertThat(moved.maxBytes()).isEqualTo(10 << 20);
    }

    @Test
    void aPartitionLeftOutIsForgottenAndSentAgainWhenItComesBack() {
        FollowerFetchSession s = new FollowerFetchSession(7, V);
        FetchRequest.PartitionData a0 = data(A, 10);
        FetchRequest.PartitionData b0 = data(B, 30);
        round(s, V, of(A0, a0, B0, b0));
        assertThat(s.handleResponse(answer(42, Errors.NONE, A, 0, B, 0))).isTrue();

        FetchRequestData without = round(s, V, of(A0, a0));
        assertThat(without.topics()).isEmpty();
        assertThat(forgotten(without)).containsExactly(B + "-0");
        assertThat(s.size()).isEqualTo(1);
        assertThat(s.handleResponse(answer(42, Errors.NONE))).isTrue();

        FetchRequestData back = round(s, V, of(A0, a0, B0, b0));
        assertThat(sent(back)).containsExactly(B + "-0@30");
        assertThat(back.forgottenTopicsData()).isEmpty();
    }

    @Test
    void aRecreatedTopicIsForgottenUnderItsOldIdAndSentUnderItsNewOne() {
        FollowerFetchSession s = new FollowerFetchSession(7, V);
        round(s, V, of(A0, data(A, 10)));
        assertThat(s.handleResponse(answer(42, Errors.NONE, A, 0))).isTrue();

        FetchRequestData replaced = round(s, V, of(A0, data(B, 0)));
        assertThat(forgotten(replaced)).containsExactly(A + "-0");
        assertThat(sent(replaced)).containsExactly(B + "-0@0");
    }

    @Test
    void eachWayASessionEndsLeadsToAFullFetch() {
        FollowerFetchSession s = new FollowerFetchSession(7, V);
        round(s, V, BOTH);
        assertThat(s.handleResponse(answer(42, Errors.NONE, A, 0, B, 0))).isTrue();

        // a wrong epoch: the next fetch is full, under the old id so the leader closes that session
        round(s, V, BOTH);
        assertThat(s.handleResponse(answer(0, Errors.INVALID_FETCH_SESSION_EPOCH))).isFalse();
        FetchRequestData reopen = round(s, V, BOTH);
        assertThat(reopen.sessionId()).isEqualTo(42);
        assertThat(reopen.sessionEpoch()).isZero();
        assertThat(sent(reopen)).hasSize(2);

        // a full answer that leaves a partition out is not a session
        assertThat(s.handleResponse(answer(43, Errors.NONE, A, 0))).isFalse();
        assertThat(round(s, V, BOTH).sessionEpoch()).isZero();
        assertThat(s.handleResponse(answer(43, Errors.NONE, A, 0, B, 0))).isTrue();
        assertThat(s.sessionId()).isEqualTo(43);

        // the leader no longer knows the session: a new one, without the old id
        round(s, V, BOTH);
        assertThat(s.handleResponse(answer(0, Errors.FETCH_SESSION_ID_NOT_FOUND))).isFalse();
        FetchRequestData fresh = round(s, V, BOTH);
        assertThat(fresh.sessionId()).isZero();
        assertThat(fresh.sessionEpoch()).isZero();
        assertThat(s.handleResponse(answer(44, Errors.NONE, A, 0, B, 0))).isTrue();

        // the leader closed the session in an incremental answer: the answer stands, the next fetch opens a new one
        round(s, V, BOTH);
        assertThat(s.handleResponse(answer(0, Errors.NONE, A, 0))).isTrue();
        FetchRequestData afterClose = round(s, V, BOTH);
        assertThat(afterClose.sessionId()).isZero();
        assertThat(afterClose.sessionEpoch()).isZero();
        assertThat(s.handleResponse(answer(45, Errors.NONE, A, 0, B, 0))).isTrue();

        // a round that failed on the wire, or whose answer was not applied
        round(s, V, BOTH);
        s.handleError();
        FetchRequestData afterError = round(s, V, BOTH);
        assertThat(afterError.sessionId()).isEqualTo(45);
        assertThat(afterError.sessionEpoch()).isZero();
        assertThat(sent(afterError)).hasSize(2);
    }

    @Test
    void aLeaderThatAnswersWithoutASessionGetsFullFetches() {
        FollowerFetchSession s = new FollowerFetchSession(7, V);
        round(s, V, BOTH);
        assertThat(s.handleResponse(answer(0, Errors.NONE, A, 0, B, 0))).isTrue();
        FetchRequestData next = round(s, V, BOTH);
        assertThat(next.sessionEpoch()).isZero();
        assertThat(sent(next)).hasSize(2);
    }

    @ParameterizedTest
    @ValueSource(shorts = {4, 6, 7, 12, 13, 15, 17})
    void everyVersionGetsARequestItCanCarry(short version) {
        FollowerFetchSession s = new FollowerFetchSession(7, version);
        Uuid a = version >= 13 ? A : Uuid.ZERO_UUID;
        FetchRequestData first = round(s, version, of(A0, data(a, 10), A1, data(a, 20)));
        assertThat(first.topics()).hasSize(1);
        assertThat(sent(first)).hasSize(2);
        if (version >= 13) {
            assertThat(first.topics().get(0).topicId()).isEqualTo(A);
        } else {
            assertThat(first.topics().get(0).topic()).isEqualTo("a");
        }
        assertThat(version >= 15 ? first.replicaState().replicaId() : first.replicaId()).isEqualTo(7);
        if (version < 7) {
            // no sessions before v7: every fetch is a full one
            assertThat(first.sessionEpoch()).isEqualTo(-1);
            assertThat(s.handleResponse(new FetchResponseData())).isTrue();
            assertThat(sent(round(s, version, of(A0, data(a, 10), A1, data(a, 20))))).hasSize(2);
        } else {
            assertThat(s.handleResponse(new FetchResponseData().setSessionId(5).setResponses(List.of(
                    new FetchResponseData.FetchableTopicResponse().setTopic("a").setTopicId(a).setPartitions(List.of(
                            new FetchResponseData.PartitionData().setPartitionIndex(0),
                            new FetchResponseData.PartitionData().setPartitionIndex(1))))))).isTrue();
            FetchRequestData forget = round(s, version, of(A0, data(a, 10)));
            assertThat(forget.sessionId()).isEqualTo(5);
            assertThat(forgotten(forget)).containsExactly((version >= 13 ? A.toString() : "a") + "-1");
        }
    }
}
