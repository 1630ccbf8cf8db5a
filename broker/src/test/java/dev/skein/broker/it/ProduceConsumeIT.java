package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Real kafka-clients producers and consumers against one broker. */
class ProduceConsumeIT {
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    void idempotentAcksAllProducerRoundTripsEveryRecordWithEachCodec(String codec) throws Exception {
        String topic = "codec-" + codec;
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
        }
        int n = 3000;
        List<RecordMetadata> acked = new ArrayList<>();
        try (KafkaProducer<String, String> producer = broker.producer(Map.of(
                ProducerConfig.COMPRESSION_TYPE_CONFIG, codec,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.BATCH_SIZE_CONFIG, 16384))) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                futures.add(producer.send(new ProducerRecord<>(topic, "key-" + (i % 17), "value-" + i)));
            }
            for (Future<RecordMetadata> f : futures) {
                acked.add(f.get());
            }
        }
        assertThat(acked).hasSize(n);

        Map<TopicPartition, List<ConsumerRecord<String, String>>> byPartition = broker.consumeAll(topic, 3, n);
        int total = byPartition.values().stream().mapToInt(List::size).sum();
        assertThat(total).isEqualTo(n);
        for (List<ConsumerRecord<String, String>> records : byPartition.values()) {
            for (int i = 0; i < records.size(); i++) {
                // offsets are dense from 0 and in order
                assertThat(records.get(i).offset()).isEqualTo(i);
            }
        }
        // keyed records keep their send order per key
        Map<String, List<Integer>> perKey = new HashMap<>();
        byPartition.values().forEach(list -> list.forEach(r ->
                perKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(Integer.parseInt(r.value().substring(6)))));
        for (List<Integer> seq : perKey.values()) {
            assertThat(seq).isSorted();
        }
        assertThat(perKey).hasSize(17);
    }

    @Test
    void headersTimestampsAndNullValuesSurviveTheRoundTrip() throws Exception {
        String topic = "headers";
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, 1_700_000_000_000L, "k", (String) null);
            r.headers().add(new RecordHeader("h1", "v1".getBytes(StandardCharsets.UTF_8)));
            producer.send(r).get();
        }
        Map<TopicPartition, List<ConsumerRecord<String, String>>> got = broker.consumeAll(topic, 1, 1);
        ConsumerRecord<String, String> r = got.values().iterator().next().getFirst();
        assertThat(r.key()).isEqualTo("k");
        assertThat(r.value()).isNull();
        assertThat(r.timestamp()).isEqualTo(1_700_000_000_000L);
        assertThat(new String(r.headers().lastHeader("h1").value(), StandardCharsets.UTF_8)).isEqualTo("v1");
    }

    @Test
    void acksZeroAndAcksOneProducersAreReadBack() throws Exception {
        String topic = "acks";
        try (KafkaProducer<String, String> p0 = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "0",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false));
             KafkaProducer<String, String> p1 = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "1",
                     ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false))) {
            p1.send(new ProducerRecord<>(topic, 0, "a", "one")).get();
            for (int i = 0; i < 100; i++) {
                p0.send(new ProducerRecord<>(topic, 0, "z", "zero-" + i));
            }
            p0.flush();
            RecordMetadata last = p1.send(new ProducerRecord<>(topic, 0, "a", "two")).get();
            // acks=0 records were appended before the later acks=1 record on the same partition
            assertThat(last.offset()).isEqualTo(101);
        }
        assertThat(broker.consumeAll(topic, 1, 102).values().iterator().next()).hasSize(102);
    }

    @Test
    void acksAllIsRefusedWhenTheIsrIsBelowMinInsyncReplicas() throws Exception {
        String topic = "min-isr";
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get();
        }
        try (KafkaProducer<String, String> strict = broker.producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.RETRIES_CONFIG, 0, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000));
             KafkaProducer<String, String> leaderOnly = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "1",
                     ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false))) {
            assertThatThrownBy(() -> strict.send(new ProducerRecord<>(topic, "k", "v")).get())
                    .hasCauseInstanceOf(NotEnoughReplicasException.class);
            // acks=1 does not wait for the ISR, as in Kafka
            assertThat(leaderOnly.send(new ProducerRecord<>(topic, "k", "v")).get().offset()).isZero();
        }
    }
}
