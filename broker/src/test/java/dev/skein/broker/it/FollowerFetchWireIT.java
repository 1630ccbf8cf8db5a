package dev.skein.broker.it;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Follower fetches over the wire, in both request shapes: v12 ({@code ReplicaId}, topic names) and
 * v15+ ({@code ReplicaState}, topic ids). A follower whose {@code LastFetchedEpoch} and fetch
 * offset run past the leader's log is told where that epoch ends ({@code DivergingEpoch}) and gets
 * no records; a consistent one gets records from its offset.
 */
class FollowerFetchWireIT {
    private static TestBroker broker;
    private static Uuid topicId;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
        try (var admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic("follow", 1, (short) 1))).all().get();
            topicId = admin.describeTopics(List.of("follow")).allTopicNames().get().get("follow").topicId();
        }
        try (KafkaProducer<String, String> p = broker.producer(Map.of())) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>("follow", 0, "k", "v" + i)).get();
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    private static FetchRequestData request(short version, long offset, int lastFetchedEpoch) {
        FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
                .setSessionId(0).setSessionEpoch(-1);
        if (version >= 15) {
            data.setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(7).setReplicaEpoch(-1));
        } else {
            data.setReplicaId(7);
        }
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic();
        if (version >= 13) {
            t.setTopicId(topicId);
        } else {
            t.setTopic("follow");
        }
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(offset)
                .setCurrentLeaderEpoch(0).setLastFetchedEpoch(lastFetchedEpoch).setPartitionMaxBytes(1 << 20));
        data.topics().add(t);
        return data;
    }

    @ParameterizedTest
    @ValueSource(shorts = {12, 17})
    void divergingFollowerIsToldWhereTheEpochEnds(short version) throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            FetchResponseData r = wire.call(ApiKeys.FETCH, version, request(version, 15, 0));
            FetchResponseData.PartitionData pd = r.responses().getFirst().partitions().getFirst();
            assertThat(Errors.forCode(pd.errorCode())).isEqualTo(Errors.NONE);
            assertThat(pd.divergingEpoch().epoch()).isZero();
            assertThat(pd.divergingEpoch().endOffset()).isEqualTo(10);
            assertThat(((MemoryRecords) pd.records()).sizeInBytes()).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(shorts = {12, 17})
    void consistentFollowerGetsRecordsFromItsOffset(short version) throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            FetchResponseData r = wire.call(ApiKeys.FETCH, version, request(version, 4, 0));
            FetchResponseData.PartitionData pd = r.responses().getFirst().partitions().getFirst();
            assertThat(Errors.forCode(pd.errorCode())).isEqualTo(Errors.NONE);
            assertThat(pd.divergingEpoch().epoch()).isEqualTo(-1);
            assertThat(pd.highWatermark()).isEqualTo(10);
            var batches = ((MemoryRecords) pd.records()).batches().iterator();
            assertThat(batches.hasNext()).isTrue();
            assertThat(batches.next().lastOffset()).isGreaterThanOrEqualTo(4);
        }
    }
}
