package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * kill -9 of a broker process in the middle of an idempotent acks=all burst, twice: after each restart every
 * acknowledged record is at its acknowledged offset, offsets are dense, and no corrupt batch is served.
 */
class CrashRecoveryIT {
    private static final String TOPIC = "crash";
    private static final int PARTITIONS = 3;
    private static final int RECORDS_PER_ROUND = 20_000;
    private static final int CHUNK = 250;

    @Test
    void everyAcknowledgedRecordSurvivesKillMinus9MidBurst() throws Exception {
        try (BrokerProcess broker = new BrokerProcess(Map.of("log.segment.bytes", String.valueOf(1024 * 1024)))) {
            broker.start();
            try (Admin admin = broker.admin(Duration.ofSeconds(30))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            }
            Map<TopicPartition, Map<Long, String>> acked = new ConcurrentHashMap<>();
            for (int round = 0; round < 2; round++) {
                AtomicInteger ackedThisRound = new AtomicInteger();
                try (KafkaProducer<String, String> producer = producer(broker)) {
                    int r = round;
                    Thread sender = Thread.ofVirtual().start(() -> {
                        for (int i = 0; i < RECORDS_PER_ROUND; i++) {
                            String value = "r" + r + "-" + i + "-" + "x".repeat(200);
                            producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, "k" + i, value), (md, e) -> {
                                if (e == null) {
                                    acked.computeIfAbsent(new TopicPartition(md.topic(), md.partition()),
                                            k -> new ConcurrentHashMap<>()).put(md.offset(), value);
                                    ackedThisRound.incrementAndGet();
                                }
                            });
                            if ((i + 1) % CHUNK == 0) {
                                producer.flush();
                            }
                        }
                    });
                    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(1))
                            .until(() -> ackedThisRound.get() >= RECORDS_PER_ROUND / 4);
                    broker.kill();
                    assertThat(ackedThisRound.get()).as("killed mid-burst").isLessThan(RECORDS_PER_ROUND);
                    broker.start();
                    sender.join(Duration.ofSeconds(180));
                    assertThat(sender.isAlive()).as("burst finished after restart").isFalse();
                    producer.flush();
                }
                verifyLog(broker, acked);
            }
            // one more crash, this time with the producer idle, then a final check
            broker.kill();
            broker.start();
            verifyLog(broker, acked);
        }
    }

    private static KafkaProducer<String, String> producer(BrokerProcess broker) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        p.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 500);
        return new KafkaProducer<>(p);
    }

    /** Reads every partition to its end with CRC checks on and checks dense offsets and every acknowledged record. */
    private static void verifyLog(BrokerProcess broker, Map<TopicPartition, Map<Long, String>> acked) throws Exception {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, true);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) {
            tps.add(new TopicPartition(TOPIC, i));
        }
        Map<TopicPartition, List<ConsumerRecord<String, String>>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    read.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r);
                }
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp) < end.get(tp)) {
                        return false;
                    }
                }
                return true;
            });
        }
        for (TopicPartition tp : tps) {
            List<ConsumerRecord<String, String>> records = read.getOrDefault(tp, List.of());
            for (int i = 0; i < records.size(); i++) {
                assertThat(records.get(i).offset()).as("dense offsets in %s", tp).isEqualTo(i);
            }
            Map<Long, String> expected = acked.getOrDefault(tp, Map.of());
            assertThat(expected).as("acknowledged records in %s", tp).isNotEmpty();
            for (Map.Entry<Long, String> e : expected.entrySet()) {
                assertThat(e.getKey()).as("acknowledged offset in %s", tp).isLessThan(records.size());
                assertThat(records.get(e.getKey().intValue()).value()).as("value at %s@%d", tp, e.getKey()).isEqualTo(e.getValue());
            }
        }
    }
}
