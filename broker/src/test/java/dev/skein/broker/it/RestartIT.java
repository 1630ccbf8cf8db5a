package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What a broker keeps across a restart on the same log dir, and what it cuts off. */
class RestartIT {
    private TestBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = TestBroker.start(Map.of("log.segment.bytes", String.valueOf(64 * 1024)));
    }

    @AfterEach
    void stop() throws Exception {
        broker.close();
    }

    @Test
    void dataTopicConfigsTopicIdsAndCommittedOffsetsSurviveACleanRestart() throws Exception {
        String topic = "keep";
        Uuid id;
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1)
                    .configs(Map.of("retention.ms", "86400123", "cleanup.policy", "delete")))).all().get();
            id = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
        }
        List<String> values = produce(topic, 0, 500, "before");
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = broker.consumer("restart-group", Map.of())) {
            consumer.assign(List.of(tp0));
            consumer.commitSync(Map.of(tp0, new OffsetAndMetadata(123, "meta")));
        }

        broker.restart();

        try (Admin admin = broker.admin()) {
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId()).isEqualTo(id);
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()).hasSize(2);
            Config config = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic)))
                    .all().get().values().iterator().next();
            assertThat(config.get("retention.ms").value()).isEqualTo("86400123");
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets("restart-group").partitionsToOffsetAndMetadata().get();
            assertThat(committed).containsEntry(tp0, new OffsetAndMetadata(123, "meta"));
        }
        assertThat(broker.readValues(tp0)).containsExactlyElementsOf(values);
        // appends continue at the old log end offset
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            assertThat(producer.send(new ProducerRecord<>(topic, 0, "k", "after")).get().offset()).isEqualTo(500);
        }
    }

    @Test
    void tornTailOfTheLastSegmentIsTruncatedOnRestartAndEarlierRecordsAreServed() throws Exception {
        String topic = "torn";
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        List<String> values = produce(topic, 0, 1000, "v");
        broker.stop();

        Path lastSegment = lastLogSegment(tp);
        long sizeBefore = Files.size(lastSegment);
        byte[] garbage = new byte[300];
        new Random(42).nextBytes(garbage);
        // a plausible-looking batch header (offset 1000, length 250) followed by noise: a torn write
        ByteBuffer.wrap(garbage).putLong(1000L).putInt(250);
        try (FileChannel ch = FileChannel.open(lastSegment, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(garbage));
        }

        broker.resume();

        assertThat(Files.size(lastSegment)).as("torn tail cut off").isEqualTo(sizeBefore);
        assertThat(broker.readValues(tp)).containsExactlyElementsOf(values);
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            assertThat(producer.send(new ProducerRecord<>(topic, 0, "k", "after")).get().offset()).isEqualTo(1000);
        }
        values.add("after");
        assertThat(broker.readValues(tp)).containsExactlyElementsOf(values);
    }

    private List<String> produce(String topic, int partition, int n, String prefix) throws Exception {
        List<String> values = new ArrayList<>();
        try (KafkaProducer<String, String> producer = broker.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < n; i++) {
                String v = prefix + "-" + i + "-" + "p".repeat(100);
                producer.send(new ProducerRecord<>(topic, partition, "k" + i, v));
                values.add(v);
            }
            producer.flush();
        }
        return values;
    }

    private Path lastLogSegment(TopicPartition tp) throws IOException {
        Path partitionDir = broker.dataDir().resolve("logs").resolve(tp.topic() + "-" + tp.partition());
        try (Stream<Path> files = Files.list(partitionDir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .max(Comparator.comparing(f -> Long.parseLong(f.getFileName().toString().replace(".log", ""))))
                    .orElseThrow();
        }
    }

}
