package dev.skein.broker.it;

import dev.skein.broker.testing.FreePorts;
import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A real Skein broker in this JVM on a loopback port chosen by the OS, with its own log dir, and
 * factories for real Kafka clients pointed at it. Restartable on the same dir.
 */
public final class TestBroker implements AutoCloseable {
    private final Path dataDir;
    private final boolean ownsDir;
    private final Map<String, String> overrides;
    private SkeinBroker broker;
    private int port;

    private TestBroker(Path dataDir, boolean ownsDir, Map<String, String> overrides) {
        this.dataDir = dataDir;
        this.ownsDir = ownsDir;
        this.overrides = overrides;
    }

    public static TestBroker start(Map<String, String> overrides) throws Exception {
        Path dir = Files.createTempDirectory("skein-it-");
        TestBroker b = new TestBroker(dir, true, new HashMap<>(overrides));
        b.startBroker(0);
        return b;
    }

    public static TestBroker start() throws Exception {
        return start(Map.of());
    }

    /** The properties a broker of these tests starts with: Kafka's KRaft combined-mode file, with short timings. */
    public static Map<String, String> baseProperties(Path dataDir, int port) {
        Map<String, String> p = new HashMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@127.0.0.1:0");
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:0");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("log.dirs", dataDir.resolve("logs").toString());
        p.put("offsets.topic.num.partitions", "5");
        p.put("offsets.topic.replication.factor", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("skein.http.port", "0");
        p.put("num.io.threads", "4");
        p.put("num.network.threads", "2");
        return p;
    }

    /**
     * Properties of a cluster of {@code size} in-JVM brokers under {@code dir}, each a voter of the
     * controller quorum (node ids 0..size-1, controller ports picked free, Kafka ports chosen by the OS).
     */
    public static List<Map<String, String>> quorumProperties(Path dir, int size) throws IOException {
        return quorumProperties(dir, size, 0);
    }

    /**
     * As {@link #quorumProperties(Path, int)}, plus {@code observers} brokers that are not voters
     * ({@code process.roles=broker}, node ids after the voters', no CONTROLLER listener), as Kafka
     * configures broker-only nodes.
     */
    public static List<Map<String, String>> quorumProperties(Path dir, int size, int observers) throws IOException {
        // brokers of a test share this JVM: a Ratis failure must fail the test, not call System.exit
        org.apache.ratis.util.ExitUtils.disableSystemExit();
        List<String> voters = new ArrayList<>();
        List<Integer> controllerPorts = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            controllerPorts.add(FreePorts.pick());
            voters.add(i + "@127.0.0.1:" + controllerPorts.get(i));
        }
        List<Map<String, String>> out = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Map<String, String> p = baseProperties(dir.resolve("broker-" + i), 0);
            p.put("node.id", Integer.toString(i));
            p.put("controller.quorum.voters", String.join(",", voters));
            p.put("listeners", "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:" + controllerPorts.get(i));
            out.add(p);
        }
        for (int i = size; i < size + observers; i++) {
            Map<String, String> p = baseProperties(dir.resolve("broker-" + i), 0);
            p.put("node.id", Integer.toString(i));
            p.put("process.roles", "broker");
            p.put("controller.quorum.voters", String.join(",", voters));
            p.put("listeners", "PLAINTEXT://127.0.0.1:0");
            out.add(p);
        }
        return out;
    }

    private void startBroker(int listenPort) throws Exception {
        Map<String, String> p = baseProperties(dataDir, listenPort);
        p.putAll(overrides);
        broker = SkeinBroker.start(new BrokerConfig(p));
        port = broker.port();
    }

    /** Stops the broker cleanly and starts it again on the same dir and port. */
    public void restart() throws Exception {
        broker.close();
        startBroker(port);
    }

    /** Starts a broker stopped with {@link #stop()} again on the same dir and port. */
    public void resume() throws Exception {
        if (broker == null) {
            startBroker(port);
        }
    }

    public void stop() {
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }

    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public int httpPort() {
        return broker.httpPort();
    }

    public Path dataDir() {
        return dataDir;
    }

    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return Admin.create(p);
    }

    public KafkaProducer<String, String> producer(Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    public KafkaConsumer<String, String> consumer(String groupId, Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (groupId != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        }
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    /** Reads partitions 0..partitions-1 of a topic from the beginning until {@code expected} records arrived (or 60 s). */
    public Map<TopicPartition, List<ConsumerRecord<String, String>>> consumeAll(String topic, int partitions, int expected) {
        Map<TopicPartition, List<ConsumerRecord<String, String>>> out = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = consumer(null, Map.of())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            int count = 0;
            while (count < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    out.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r);
                    count++;
                }
            }
        }
        return out;
    }

    /**
     * Reads one partition from its start to its current end with CRC checks on, asserting that
     * offsets are dense; returns the values in offset order.
     */
    public List<String> readValues(TopicPartition tp) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(null, Map.of(ConsumerConfig.CHECK_CRCS_CONFIG, true))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long start = consumer.position(tp);
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(r.offset()).isEqualTo(start + values.size());
                    values.add(r.value());
                }
                return consumer.position(tp) >= end;
            });
        }
        return values;
    }

    @Override
    public void close() throws IOException {
        stop();
        if (ownsDir) {
            deleteRecursively(dataDir);
        }
    }

    public static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
