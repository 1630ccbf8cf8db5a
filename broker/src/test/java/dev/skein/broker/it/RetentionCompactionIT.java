package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Retention and compaction as a user sees them through the broker's background jobs, with short
 * settings: old segments go away, compacted topics keep the latest value per key.
 */
class RetentionCompactionIT {
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start(Map.of(
                "log.retention.check.interval.ms", "100",
                "log.cleaner.backoff.ms", "100",
                "log.segment.delete.delay.ms", "0"));
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    private static long earliest(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset();
    }

    @Test
    void retentionBytesDeletesTheOldestSegments() throws Exception {
        String topic = "retained-bytes";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                    "segment.bytes", "16384", "retention.bytes", "32768")))).all().get();
            try (KafkaProducer<String, String> producer = broker.producer(Map.of("batch.size", 1024, "linger.ms", 0))) {
                for (int i = 0; i < 400; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, "k" + i, "x".repeat(500))).get();
                }
            }
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(earliest(admin, tp)).isGreaterThan(0));
            long start = earliest(admin, tp);
            // what is left is readable from the new start to the end, and nothing before it
            List<ConsumerRecord<String, String>> left = broker.consumeAll(topic, 1, (int) (400 - start))
                    .values().iterator().next();
            assertThat(left.getFirst().offset()).isEqualTo(start);
            assertThat(left.getLast().offset()).isEqualTo(399);
        }
    }

    @Test
    void retentionMsDeletesExpiredSegments() throws Exception {
        String topic = "retained-time";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                    "segment.ms", "200", "retention.ms", "500")))).all().get();
            try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, "k", "v" + i)).get();
                }
            }
            // once the records are older than retention.ms their segment rolls and is deleted
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(earliest(admin, tp)).isEqualTo(10));
            long latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
            assertThat(latest).isEqualTo(10);
        }
    }

    @Test
    void compactionKeepsTheLatestValuePerKeyAndDropsTombstones() throws Exception {
        String topic = "compacted";
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                    "cleanup.policy", "compact", "segment.ms", "100", "min.cleanable.dirty.ratio", "0.01",
                    "delete.retention.ms", "0", "segment.bytes", "16384")))).all().get();
        }
        try (KafkaProducer<String, String> producer = broker.producer(Map.of("batch.size", 512, "linger.ms", 0))) {
            for (int round = 0; round < 20; round++) {
                for (int k = 0; k < 10; k++) {
                    producer.send(new ProducerRecord<>(topic, 0, "key-" + k, "round-" + round)).get();
                }
            }
            producer.send(new ProducerRecord<>(topic, 0, "key-0", null)).get();
            // a later record makes sure the tombstone's segment is not the active one
            producer.send(new ProducerRecord<>(topic, 0, "key-1", "final")).get();
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
            try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
                // keeps rolling the active segment so the cleaner can reach the newest records
                producer.send(new ProducerRecord<>(topic, 0, "key-9", "round-19")).get();
            }
            Map<String, String> latest = new HashMap<>();
            int count = 0;
            for (ConsumerRecord<String, String> r : readAll(topic)) {
                latest.put(r.key(), r.value());
                count++;
            }
            assertThat(count).isPositive();
            assertThat(latest).containsEntry("key-1", "final").containsEntry("key-5", "round-19");
            assertThat(latest).doesNotContainKey("key-0");
            assertThat(count).isLessThan(50);
        });
    }

    private static List<ConsumerRecord<String, String>> readAll(String topic) throws Exception {
        long end;
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = broker.admin()) {
            end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
        try (var consumer = broker.consumer(null, Map.of())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            List<ConsumerRecord<String, String>> out = new java.util.ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            return out;
        }
    }
}
