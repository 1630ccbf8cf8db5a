package dev.skein.broker.it;

import dev.skein.broker.testing.Command;
import dev.skein.broker.testing.Command.Result;
import dev.skein.broker.testing.Kcat;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** librdkafka's kcat against the broker: produce, consume, metadata, and interop with the Java client. */
class KcatIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        Kcat.assumeInstalled();
        broker = TestBroker.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void keysValuesAndHeadersProducedByKcatAreConsumedExactlyByKcat() throws Exception {
        createTopic("kcat-roundtrip", 1);
        Result produced = kcat("k1:v1\nk2:v2\nk3:hello world\n",
                "-P", "-b", broker.bootstrap(), "-t", "kcat-roundtrip", "-K:", "-H", "h=v");
        assertThat(produced.exit()).as(produced.stderr()).isZero();

        Result consumed = kcat(null, "-C", "-b", broker.bootstrap(), "-t", "kcat-roundtrip",
                "-o", "beginning", "-e", "-f", "%k|%s|%h\\n");
        assertThat(consumed.exit()).as(consumed.stderr()).isZero();
        assertThat(consumed.stdout()).isEqualTo("k1|v1|h=v\nk2|v2|h=v\nk3|hello world|h=v\n");
    }

    @Test
    void metadataListsTheBrokerAndEveryPartitionOfTheTopic() throws Exception {
        createTopic("kcat-meta", 3);
        Result json = kcat(null, "-L", "-J", "-b", broker.bootstrap(), "-t", "kcat-meta");
        assertThat(json.exit()).as(json.stderr()).isZero();
        String out = json.stdout().replace(" ", "");
        assertThat(out).contains("\"brokers\":[{\"id\":1,\"name\":\"127.0.0.1:" + broker.port() + "\"}]");
        assertThat(out).contains("\"topic\":\"kcat-meta\"");
        for (int p = 0; p < 3; p++) {
            assertThat(out).contains("{\"partition\":" + p + ",\"leader\":1,");
        }
        assertThat(out).doesNotContain("\"partition\":3,");

        Result plain = kcat(null, "-L", "-b", broker.bootstrap(), "-t", "kcat-meta");
        assertThat(plain.exit()).as(plain.stderr()).isZero();
        assertThat(plain.stdout())
                .contains("1 brokers:", "broker 1 at 127.0.0.1:" + broker.port(),
                        "topic \"kcat-meta\" with 3 partitions:",
                        "partition 0, leader 1, replicas: 1, isrs: 1",
                        "partition 2, leader 1, replicas: 1, isrs: 1");
    }

    @Test
    void recordProducedByJavaIsReadByKcat() throws Exception {
        createTopic("java-to-kcat", 1);
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            ProducerRecord<String, String> r = new ProducerRecord<>("java-to-kcat", 0, "jk", "java value");
            r.headers().add(new RecordHeader("origin", "java".getBytes(StandardCharsets.UTF_8)));
            producer.send(r).get();
        }
        Result consumed = kcat(null, "-C", "-b", broker.bootstrap(), "-t", "java-to-kcat",
                "-o", "beginning", "-e", "-f", "%k|%s|%h|%o\\n");
        assertThat(consumed.exit()).as(consumed.stderr()).isZero();
        assertThat(consumed.stdout()).isEqualTo("jk|java value|origin=java|0\n");
    }

    @Test
    void recordProducedByKcatIsReadByJava() throws Exception {
        createTopic("kcat-to-java", 1);
        Result produced = kcat("kk:kcat value\n", "-P", "-b", broker.bootstrap(), "-t", "kcat-to-java",
                "-K:", "-H", "origin=kcat", "-z", "lz4");
        assertThat(produced.exit()).as(produced.stderr()).isZero();

        TopicPartition tp = new TopicPartition("kcat-to-java", 0);
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = broker.consumer(null, Map.of("check.crcs", true))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
                return !got.isEmpty();
            });
        }
        assertThat(got).hasSize(1);
        ConsumerRecord<String, String> r = got.getFirst();
        assertThat(r.key()).isEqualTo("kk");
        assertThat(r.value()).isEqualTo("kcat value");
        assertThat(r.offset()).isZero();
        assertThat(new String(r.headers().lastHeader("origin").value(), StandardCharsets.UTF_8)).isEqualTo("kcat");
    }

    private static void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    /** Runs kcat with {@code stdin} (or none), waits at most {@link #TIMEOUT}, and always kills it afterwards. */
    private static Result kcat(String stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("kcat");
        command.addAll(List.of(args));
        Result r = Command.of(command).stdin(stdin).timeout(TIMEOUT).run();
        assertThat(r.timedOut()).as("kcat %s exited within %s; stderr: %s", command, TIMEOUT, r.stderr()).isFalse();
        return r;
    }
}
