package dev.skein.broker.it;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.server.Partition;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * KIP-73 re-replication throttling on three in-JVM brokers that form the real Raft controller
 * quorum: a follower stopped while ~8 MiB are written comes back outside the ISR and catches up no
 * faster than the dynamic {@code follower.replication.throttled.rate} (within 20%), then rejoins
 * the ISR; the dynamic values are described with their source.
 */
class ReplicationThrottleIT {
    private static final Logger log = LoggerFactory.getLogger(ReplicationThrottleIT.class);
    private static final String TOPIC = "throttled";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final long RATE = 1024 * 1024;
    private static final int RECORD_BYTES = 1000;
    private static final int RECORDS = 8 * 1024;

    @TempDir
    Path dir;
    private final SkeinBroker[] brokers = new SkeinBroker[3];
    private final Map<Integer, Map<String, String>> props = new HashMap<>();

    @BeforeEach
    void startCluster() throws Exception {
        List<Map<String, String>> quorum = TestBroker.quorumProperties(dir, 3);
        for (int i = 0; i < 3; i++) {
            Map<String, String> p = quorum.get(i);
            p.put("offsets.topic.replication.factor", "3");
            p.put("offsets.topic.num.partitions", "1");
            p.put("broker.heartbeat.interval.ms", "200");
            p.put("broker.session.timeout.ms", "3000");
            p.put("replica.lag.time.max.ms", "2000");
            props.put(i, p);
            brokers[i] = SkeinBroker.start(new BrokerConfig(p));
        }
    }

    @AfterEach
    void stopCluster() {
        for (SkeinBroker b : brokers) {
            if (b != null) {
                b.close();
            }
        }
    }

    private Admin admin() {
        List<String> servers = new ArrayList<>();
        for (SkeinBroker b : brokers) {
            if (b != null) {
                servers.add(b.bootstrapServers());
            }
        }
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, String.join(",", servers),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000"));
    }

    @Test
    void restartedFollowerCatchesUpAtTheThrottledRateAndRejoinsTheIsr() throws Exception {
        int follower;
        int leader;
        try (Admin admin = admin()) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(admin.describeCluster().nodes().get()).hasSize(3));
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3).configs(Map.of(
                    "follower.replication.throttled.replicas", "*")), busyTopic())).all().get();
            TopicDescription d = awaitFullIsr(admin);
            leader = d.partitions().getFirst().leader().id();
            follower = d.partitions().getFirst().replicas().stream().map(Node::id).filter(id -> id != leader)
                    .findFirst().orElseThrow();

            // the follower's own rate, set while it is up (it is in the ISR, so nothing is slowed yet)
            ConfigResource followerResource = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(follower));
            admin.incrementalAlterConfigs(Map.of(followerResource, List.of(new AlterConfigOp(
                    new ConfigEntry("follower.replication.throttled.rate", Long.toString(RATE)), AlterConfigOp.OpType.SET))))
                    .all().get();
            // a cluster-wide default that this test's topic does not use (no leader-side replicas listed)
            ConfigResource defaults = new ConfigResource(ConfigResource.Type.BROKER, "");
            admin.incrementalAlterConfigs(Map.of(defaults, List.of(new AlterConfigOp(
                    new ConfigEntry("leader.replication.throttled.rate", "52428800"), AlterConfigOp.OpType.SET))))
                    .all().get();
            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(defaults, List.of(new AlterConfigOp(
                    new ConfigEntry("log.retention.ms", "1000"), AlterConfigOp.OpType.SET)))).all().get())
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("Cannot update these configs dynamically").hasMessageContaining("log.retention.ms");
            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(defaults, List.of(new AlterConfigOp(
                    new ConfigEntry("follower.replication.throttled.rate", "-5"), AlterConfigOp.OpType.SET)))).all().get())
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidConfigurationException.class);
        }

        long caughtUp = stopWriteRestartAndMeasureCatchUp(leader, follower);

        try (Admin admin = admin()) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(isr(admin)).contains(follower));

            Map<ConfigResource, Config> described = admin.describeConfigs(List.of(
                    new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(follower)),
                    new ConfigResource(ConfigResource.Type.BROKER, ""))).all().get();
            Config own = described.get(new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(follower)));
            assertThat(own.get("follower.replication.throttled.rate").value()).isEqualTo(Long.toString(RATE));
            assertThat(own.get("follower.replication.throttled.rate").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
            assertThat(own.get("leader.replication.throttled.rate").value()).isEqualTo("52428800");
            assertThat(own.get("leader.replication.throttled.rate").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
            assertThat(own.get("log.retention.ms").isReadOnly()).isTrue();
            Config clusterDefault = described.get(new ConfigResource(ConfigResource.Type.BROKER, ""));
            assertThat(clusterDefault.get("leader.replication.throttled.rate").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        }
        assertThat(throttledBytes(follower, "follower")).isGreaterThanOrEqualTo(0.9 * caughtUp);
    }

    @Test
    void leaderSendsToAnOutOfSyncFollowerNoFasterThanTheLeaderRate() throws Exception {
        int follower;
        int leader;
        try (Admin admin = admin()) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(admin.describeCluster().nodes().get()).hasSize(3));
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3), busyTopic())).all().get();
            TopicDescription d = awaitFullIsr(admin);
            leader = d.partitions().getFirst().leader().id();
            follower = d.partitions().getFirst().replicas().stream().map(Node::id).filter(id -> id != leader)
                    .findFirst().orElseThrow();
            // the leader's replica is listed for the leader side; the rate comes from the cluster-wide default
            admin.incrementalAlterConfigs(Map.of(
                    new ConfigResource(ConfigResource.Type.TOPIC, TOPIC), List.of(new AlterConfigOp(
                            new ConfigEntry("leader.replication.throttled.replicas", "0:" + leader), AlterConfigOp.OpType.SET)),
                    new ConfigResource(ConfigResource.Type.BROKER, ""), List.of(new AlterConfigOp(
                            new ConfigEntry("leader.replication.throttled.rate", Long.toString(RATE)),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        long caughtUp = stopWriteRestartAndMeasureCatchUp(leader, follower);
        try (Admin admin = admin()) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(isr(admin)).contains(follower));
        }
        assertThat(throttledBytes(leader, "leader")).isGreaterThanOrEqualTo(0.9 * caughtUp);
        assertThat(throttledBytes(follower, "follower")).isZero();
    }

    /**
     * Stops {@code follower}, writes ~8 MiB, restarts it (outside the ISR) and samples its log size
     * until it holds what the leader holds; asserts the catch-up took at least 5 s at {@link #RATE}
     * within 20% and returns the bytes it caught up.
     */
    private long stopWriteRestartAndMeasureCatchUp(int leader, int follower) throws Exception {
        brokers[follower].close();
        brokers[follower] = null;
        try (Admin admin = admin()) {
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(isr(admin)).doesNotContain(follower));
        }
        produce(RECORDS);
        long leaderSize = partition(leader).log().size();
        assertThat(leaderSize).isGreaterThan(7 * RATE);

        long restartedAt = System.nanoTime();
        brokers[follower] = SkeinBroker.start(new BrokerConfig(props.get(follower)));
        List<long[]> samples = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Partition p = partition(follower);
            long size = p == null ? 0 : p.log().size();
            samples.add(new long[]{System.nanoTime(), size});
            return size >= leaderSize;
        });
        long[] start = null;
        for (int i = 1; i < samples.size(); i++) {
            if (samples.get(i)[1] > samples.get(i - 1)[1]) {
                start = samples.get(i - 1);
                break;
            }
        }
        assertThat(start).isNotNull();
        long[] end = samples.getLast();
        double seconds = (end[0] - start[0]) / 1e9;
        double rate = (end[1] - start[1]) / seconds;
        log.info("Follower {} caught up {} bytes from leader {} in {} s: {} B/s against a limit of {} B/s ({} s after restart)",
                follower, end[1] - start[1], leader, String.format("%.2f", seconds), (long) rate, RATE,
                String.format("%.2f", (end[0] - restartedAt) / 1e9));
        assertThat(seconds).isGreaterThanOrEqualTo(5.0);
        assertThat(rate).isBetween(0.8 * RATE, 1.2 * RATE);
        return end[1] - start[1];
    }

    /**
     * An unthrottled topic led from every broker, so the restarted follower always fetches an
     * in-sync partition from the same leader beside the throttled one (and a held-back throttled
     * partition must not wait out that partition's long-poll).
     */
    private static NewTopic busyTopic() {
        return new NewTopic("in-sync-neighbour", 6, (short) 3);
    }

    private void produce(int records) throws Exception {
        Map<String, Object> p = new HashMap<>();
        List<String> servers = new ArrayList<>();
        for (SkeinBroker b : brokers) {
            if (b != null) {
                servers.add(b.bootstrapServers());
            }
        }
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, String.join(",", servers));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        Random random = new Random(7);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < records; i++) {
                byte[] value = new byte[RECORD_BYTES];
                random.nextBytes(value);
                producer.send(new ProducerRecord<>(TOPIC, 0, null, value));
            }
            producer.flush();
        }
    }

    private Partition partition(int broker) {
        SkeinBroker b = brokers[broker];
        return b == null || b.replicaManager() == null ? null : b.replicaManager().partition(TP).orElse(null);
    }

    private TopicDescription awaitFullIsr(Admin admin) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(isr(admin)).hasSize(3));
        try {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static List<Integer> isr(Admin admin) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
        return d.partitions().getFirst().isr().stream().map(Node::id).toList();
    }

    private double throttledBytes(int broker, String direction) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + brokers[broker].httpPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        Matcher m = Pattern.compile("kafka_server_replication_throttled_bytes(?:_total)?\\{direction=\"" + direction
                + "\"[^}]*} ([0-9.E+]+)").matcher(r.body());
        assertThat(m.find()).as("throttled bytes metric in %s", r.body().length()).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
