package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Incremental fetch sessions (KIP-227) over the wire: a full fetch with epoch 0 opens a session,
 * incremental fetches name only changed partitions and are answered with only partitions that have
 * something new; wrong epochs and unknown sessions get Kafka's errors; the Java consumer uses them.
 */
class FetchSessionIT {
    private static final short FETCH_V = 17;
    private static final short PRODUCE_V = 11;
    private static TestBroker broker;
    private static Uuid sessionTopicId;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic("sessions", 3, (short) 1), new NewTopic("by-consumer", 2, (short) 1)))
                    .all().get();
            sessionTopicId = admin.describeTopics(List.of("sessions")).allTopicNames().get().get("sessions").topicId();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void aSessionAnswersOnlyThePartitionsWithSomethingNew() throws Exception {
        try (KafkaWire consumer = new KafkaWire(broker.port()); KafkaWire producer = new KafkaWire(broker.port())) {
            produce(producer, "sessions", 0, 2);
            produce(producer, "sessions", 1, 3);

            // full fetch, epoch 0: a session opens and every partition is answered
            FetchRequestData full = request(0, 0, 0);
            addPartition(full, 0, 0);
            addPartition(full, 1, 0);
            addPartition(full, 2, 0);
            FetchResponseData first = consumer.call(ApiKeys.FETCH, FETCH_V, full);
            assertThat(first.errorCode()).isZero();
            int session = first.sessionId();
            assertThat(session).as("a session was opened").isNotZero();
            assertThat(partitions(first)).containsOnlyKeys(0, 1, 2);
            assertThat(recordCount(partitions(first).get(0))).isEqualTo(2);
            assertThat(recordCount(partitions(first).get(1))).isEqualTo(3);
            assertThat(partitions(first).get(2).highWatermark()).isZero();

            // incremental, epoch 1: partitions 0 and 1 moved on past what they got; nothing is new anywhere
            FetchRequestData second = request(session, 1, 0);
            addPartition(second, 0, 2);
            addPartition(second, 1, 3);
            FetchResponseData none = consumer.call(ApiKeys.FETCH, FETCH_V, second);
            assertThat(none.errorCode()).isZero();
            assertThat(none.sessionId()).isEqualTo(session);
            assertThat(partitions(none)).as("no partition has anything new").isEmpty();

            // new records on partition 2 only: an incremental fetch naming no partition gets partition 2 alone
            produce(producer, "sessions", 2, 4);
            FetchResponseData third = consumer.call(ApiKeys.FETCH, FETCH_V, request(session, 2, 0));
            assertThat(partitions(third)).containsOnlyKeys(2);
            assertThat(recordCount(partitions(third).get(2))).isEqualTo(4);
            assertThat(partitions(third).get(2).highWatermark()).isEqualTo(4);
        }
    }

    @Test
    void aForgottenPartitionIsNotAnsweredAndALongPollWaitsForTheOthers() throws Exception {
        try (KafkaWire consumer = new KafkaWire(broker.port()); KafkaWire producer = new KafkaWire(broker.port())) {
            FetchRequestData full = request(0, 0, 0);
            long end0 = endOffset(producer, 0);
            long end1 = endOffset(producer, 1);
            addPartition(full, 0, end0);
            addPartition(full, 1, end1);
            FetchResponseData opened = consumer.call(ApiKeys.FETCH, FETCH_V, full);
            int session = opened.sessionId();
            assertThat(session).isNotZero();

            FetchRequestData forget = request(session, 1, 0);
            forget.forgottenTopicsData().add(new FetchRequestData.ForgottenTopic().setTopicId(sessionTopicId)
                    .setPartitions(new ArrayList<>(List.of(0))));
            assertThat(partitions(consumer.call(ApiKeys.FETCH, FETCH_V, forget))).isEmpty();

            // a long poll of the session: records on the forgotten partition do not answer it, on partition 1 they do
            consumer.write(ApiKeys.FETCH, FETCH_V, request(session, 2, 30_000));
            produce(producer, "sessions", 0, 1);
            produce(producer, "sessions", 1, 1);
            FetchResponseData answered = consumer.read(ApiKeys.FETCH, FETCH_V);
            assertThat(partitions(answered)).containsOnlyKeys(1);
            assertThat(recordCount(partitions(answered).get(1))).isEqualTo(1);
        }
    }

    @Test
    void wrongEpochsUnknownSessionsAndClosedSessionsGetKafkasErrors() throws Exception {
        try (KafkaWire consumer = new KafkaWire(broker.port())) {
            FetchRequestData full = request(0, 0, 0);
            addPartition(full, 0, 0);
            FetchResponseData opened = consumer.call(ApiKeys.FETCH, FETCH_V, full);
            int session = opened.sessionId();
            assertThat(session).isNotZero();

            FetchResponseData skipped = consumer.call(ApiKeys.FETCH, FETCH_V, request(session, 5, 0));
            assertThat(Errors.forCode(skipped.errorCode())).isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH);
            assertThat(skipped.responses()).isEmpty();
            // the refused request did not use up the epoch
            FetchResponseData next = consumer.call(ApiKeys.FETCH, FETCH_V, request(session, 1, 0));
            assertThat(next.errorCode()).isZero();

            FetchResponseData unknown = consumer.call(ApiKeys.FETCH, FETCH_V, request(session + 1, 1, 0));
            assertThat(Errors.forCode(unknown.errorCode())).isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);

            // an older version by name on a session opened with topic ids is refused
            FetchResponseData byName = consumer.call(ApiKeys.FETCH, (short) 12, request(session, 2, 0));
            assertThat(Errors.forCode(byName.errorCode())).isEqualTo(Errors.FETCH_SESSION_TOPIC_ID_ERROR);

            // epoch -1 with the session id closes it and is answered as a fetch without a session
            FetchRequestData close = request(session, -1, 0);
            addPartition(close, 0, 0);
            FetchResponseData closed = consumer.call(ApiKeys.FETCH, FETCH_V, close);
            assertThat(closed.errorCode()).isZero();
            assertThat(closed.sessionId()).isZero();
            assertThat(partitions(closed)).containsOnlyKeys(0);
            FetchResponseData gone = consumer.call(ApiKeys.FETCH, FETCH_V, request(session, 2, 0));
            assertThat(Errors.forCode(gone.errorCode())).isEqualTo(Errors.FETCH_SESSION_ID_NOT_FOUND);
        }
    }

    @Test
    void theJavaConsumerReadsEverythingThroughASession() throws Exception {
        int count = 2_000;
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>("by-consumer", i % 2, null, "v" + i));
            }
            producer.flush();
        }
        int before = sessionCount();
        Map<TopicPartition, List<Long>> offsets = new HashMap<>();
        AtomicInteger seen = new AtomicInteger();
        // small fetches, so the whole topic takes many incremental fetches of the one session
        try (KafkaConsumer<String, String> consumer = broker.consumer("g-sessions", Map.of(
                "max.partition.fetch.bytes", 4096, "fetch.max.bytes", 8192))) {
            consumer.assign(List.of(new TopicPartition("by-consumer", 0), new TopicPartition("by-consumer", 1)));
            consumer.seekToBeginning(consumer.assignment());
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    offsets.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r.offset());
                    seen.incrementAndGet();
                }
                return seen.get() >= count;
            });
            assertThat(sessionCount()).as("the consumer holds a fetch session").isGreaterThan(before);
        }
        assertThat(seen.get()).isEqualTo(count);
        for (List<Long> os : offsets.values()) {
            assertThat(os).hasSize(count / 2).isSorted().doesNotHaveDuplicates();
            assertThat(os.getLast()).isEqualTo(count / 2 - 1);
        }
    }

    private static int sessionCount() throws Exception {
        return (int) BrokerMetrics.value(broker.httpPort(), "kafka_server_fetchsessioncache_num_incremental_fetch_sessions");
    }

    private static FetchRequestData request(int sessionId, int epoch, int maxWaitMs) {
        return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(1).setMaxBytes(1 << 20)
                .setSessionId(sessionId).setSessionEpoch(epoch);
    }

    private static void addPartition(FetchRequestData req, int partition, long offset) {
        FetchRequestData.FetchTopic ft = req.topics().isEmpty() ? null : req.topics().getFirst();
        if (ft == null) {
            ft = new FetchRequestData.FetchTopic().setTopicId(sessionTopicId).setTopic("sessions");
            req.topics().add(ft);
        }
        ft.partitions().add(new FetchRequestData.FetchPartition().setPartition(partition).setFetchOffset(offset)
                .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1));
    }

    private static Map<Integer, FetchResponseData.PartitionData> partitions(FetchResponseData resp) {
        Map<Integer, FetchResponseData.PartitionData> out = new HashMap<>();
        for (FetchResponseData.FetchableTopicResponse t : resp.responses()) {
            assertThat(t.topicId()).isEqualTo(sessionTopicId);
            for (FetchResponseData.PartitionData p : t.partitions()) {
                assertThat(out.put(p.partitionIndex(), p)).as("partition answered once").isNull();
            }
        }
        return out;
    }

    private static int recordCount(FetchResponseData.PartitionData p) {
        int[] n = {0};
        ((Records) p.records()).batches().forEach(b -> b.forEach(r -> n[0]++));
        return n[0];
    }

    private static long endOffset(KafkaWire wire, int partition) throws Exception {
        FetchRequestData req = request(0, -1, 0);
        addPartition(req, partition, 0);
        return partitions(wire.call(ApiKeys.FETCH, FETCH_V, req)).get(partition).highWatermark();
    }

    private static void produce(KafkaWire wire, String topic, int partition, int records) throws Exception {
        SimpleRecord[] rs = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            rs[i] = new SimpleRecord(1_000L + i, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        ProduceRequestData req = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(10_000);
        ProduceRequestData.TopicProduceData td = new ProduceRequestData.TopicProduceData().setName(topic);
        td.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, rs)));
        req.topicData().add(td);
        ProduceResponseData resp = wire.call(ApiKeys.PRODUCE, PRODUCE_V, req);
        assertThat(resp.responses().iterator().next().partitionResponses().getFirst().errorCode()).isZero();
    }
}
