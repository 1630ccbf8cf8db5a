package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The Fetch API's contract, driven over the wire: long-poll, byte limits and the batch rules. */
class FetchIT {
    private static final short FETCH_V = 12;
    private static final short PRODUCE_V = 11;
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic("poll", 1, (short) 1), new NewTopic("limits", 2, (short) 1),
                    new NewTopic("batch", 1, (short) 1), new NewTopic("by-id", 1, (short) 1))).all().get();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    private static MemoryRecords batch(int records, int valueBytes) {
        SimpleRecord[] rs = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            byte[] v = new byte[valueBytes];
            v[0] = (byte) i;
            rs[i] = new SimpleRecord(1_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8), v);
        }
        return MemoryRecords.withRecords(Compression.NONE, rs);
    }

    private static ProduceResponseData produce(KafkaWire wire, String topic, int partition, MemoryRecords records) throws Exception {
        ProduceRequestData req = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000);
        ProduceRequestData.TopicProduceData td = new ProduceRequestData.TopicProduceData().setName(topic);
        td.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(records));
        req.topicData().add(td);
        ProduceResponseData resp = wire.call(ApiKeys.PRODUCE, PRODUCE_V, req);
        assertThat(resp.responses().iterator().next().partitionResponses().getFirst().errorCode()).isZero();
        return resp;
    }

    private static FetchRequestData fetch(int maxWaitMs, int minBytes, int maxBytes, String topic, long offset, int partitionMaxBytes,
                                          int... partitions) {
        FetchRequestData req = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(minBytes)
                .setMaxBytes(maxBytes).setSessionId(0).setSessionEpoch(-1);
        FetchRequestData.FetchTopic ft = new FetchRequestData.FetchTopic().setTopic(topic);
        for (int p : partitions.length == 0 ? new int[]{0} : partitions) {
            ft.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(offset)
                    .setPartitionMaxBytes(partitionMaxBytes).setCurrentLeaderEpoch(-1));
        }
        req.topics().add(ft);
        return req;
    }

    private static List<RecordBatch> batches(FetchResponseData.PartitionData p) {
        List<RecordBatch> out = new ArrayList<>();
        ((Records) p.records()).batches().forEach(out::add);
        return out;
    }

    @Test
    void longPollAnswersWhenDataArrivesNotBefore() throws Exception {
        try (KafkaWire consumer = new KafkaWire(broker.port()); KafkaWire producer = new KafkaWire(broker.port())) {
            // a fetch on an empty partition waits (up to 30 s) for its one byte
            consumer.write(ApiKeys.FETCH, FETCH_V, fetch(30_000, 1, 1 << 20, "poll", 0, 1 << 20));
            produce(producer, "poll", 0, batch(3, 10));
            FetchResponseData resp = consumer.read(ApiKeys.FETCH, FETCH_V);
            FetchResponseData.PartitionData p = resp.responses().getFirst().partitions().getFirst();
            assertThat(p.errorCode()).isZero();
            assertThat(p.highWatermark()).isEqualTo(3);
            assertThat(batches(p)).hasSize(1);
            assertThat(batches(p).getFirst().lastOffset()).isEqualTo(2);
        }
    }

    @Test
    void fetchWithNothingNewAnswersEmptyAfterMaxWait() throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            FetchResponseData resp = wire.call(ApiKeys.FETCH, FETCH_V, fetch(200, 1, 1 << 20, "limits", 0, 1 << 20, 0));
            FetchResponseData.PartitionData p = resp.responses().getFirst().partitions().getFirst();
            assertThat(p.errorCode()).isZero();
            assertThat(((Records) p.records()).sizeInBytes()).isZero();
        }
    }

    @Test
    void partitionAndResponseByteLimitsReturnWholeBatchesAndAtLeastOne() throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            for (int i = 0; i < 3; i++) {
                produce(wire, "limits", 0, batch(1, 1000));
                produce(wire, "limits", 1, batch(1, 1000));
            }
            int batchSize = batch(1, 1000).sizeInBytes();
            // partition limit below one batch: the first batch comes whole anyway
            FetchResponseData tiny = wire.call(ApiKeys.FETCH, FETCH_V, fetch(0, 1, 1 << 20, "limits", 0, 100, 0));
            assertThat(batches(tiny.responses().getFirst().partitions().getFirst())).hasSize(1);
            // two and a half batches of room: two whole batches
            FetchResponseData two = wire.call(ApiKeys.FETCH, FETCH_V, fetch(0, 1, 1 << 20, "limits", 0, batchSize * 5 / 2, 0));
            assertThat(batches(two.responses().getFirst().partitions().getFirst())).hasSize(2);
            // response limit of 1.5 batches over two partitions: the first partition gets a batch, the second none
            FetchResponseData capped = wire.call(ApiKeys.FETCH, FETCH_V, fetch(0, 1, batchSize * 3 / 2, "limits", 0, 1 << 20, 0, 1));
            List<FetchResponseData.PartitionData> ps = capped.responses().getFirst().partitions();
            assertThat(batches(ps.get(0))).hasSize(1);
            assertThat(batches(ps.get(1))).isEmpty();
        }
    }

    @Test
    void fetchFromTheMiddleOfABatchReturnsTheWholeBatch() throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            produce(wire, "batch", 0, batch(10, 10));
            FetchResponseData resp = wire.call(ApiKeys.FETCH, FETCH_V, fetch(0, 1, 1 << 20, "batch", 5, 1 << 20));
            List<RecordBatch> bs = batches(resp.responses().getFirst().partitions().getFirst());
            assertThat(bs).hasSize(1);
            assertThat(bs.getFirst().baseOffset()).isZero();
            assertThat(bs.getFirst().lastOffset()).isEqualTo(9);
            FetchResponseData beyond = wire.call(ApiKeys.FETCH, FETCH_V, fetch(0, 1, 1 << 20, "batch", 11, 1 << 20));
            assertThat(beyond.responses().getFirst().partitions().getFirst().errorCode())
                    .isEqualTo(Errors.OFFSET_OUT_OF_RANGE.code());
        }
    }

    @Test
    void topicIdsIdentifyTopicsFromVersion13() throws Exception {
        Uuid id;
        try (Admin admin = broker.admin()) {
            id = admin.describeTopics(List.of("by-id")).allTopicNames().get().get("by-id").topicId();
        }
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            produce(wire, "by-id", 0, batch(2, 10));
            short v = ApiKeys.FETCH.latestVersion();
            FetchRequestData req = fetch(0, 1, 1 << 20, "ignored", 0, 1 << 20);
            req.topics().getFirst().setTopic(null).setTopicId(id);
            FetchResponseData resp = wire.call(ApiKeys.FETCH, v, req);
            assertThat(resp.responses().getFirst().topicId()).isEqualTo(id);
            assertThat(batches(resp.responses().getFirst().partitions().getFirst())).hasSize(1);

            req.topics().getFirst().setTopicId(Uuid.randomUuid());
            FetchResponseData unknown = wire.call(ApiKeys.FETCH, v, req);
            assertThat(unknown.responses().getFirst().partitions().getFirst().errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
        }
    }
}
