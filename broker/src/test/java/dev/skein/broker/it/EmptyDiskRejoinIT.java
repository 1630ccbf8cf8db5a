package dev.skein.broker.it;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A broker killed with SIGKILL and restarted with every log dir wiped (a new incarnation, its Raft
 * storage gone too) while the cluster still counts it in every ISR: the controller takes it out of
 * every ISR as soon as it registers, it re-replicates ~24 MiB under the KIP-73 throttle (dynamic
 * cluster-wide leader and follower rates, topics listing {@code *}) at the configured rate within
 * 20% over a 10 s window, and it rejoins each ISR only once its replica holds the whole log.
 */
class EmptyDiskRejoinIT {
    private static final List<String> TOPICS = List.of("bulk-a", "bulk-b");
    private static final int PARTITIONS = 3;
    private static final long RATE = 2L * 1024 * 1024;
    private static final int RECORD_BYTES = 1000;
    private static final int RECORDS = 24 * 1024;
    /** Long enough that neither fencing nor the leaders' lag check takes the wiped broker out of an ISR before it registers. */
    private static final long SESSION_MS = 30_000;

    private ClusterProcesses cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = new ClusterProcesses("np-emptydisk-", 3, Map.of(
                "broker.heartbeat.interval.ms", "250",
                "broker.session.timeout.ms", Long.toString(SESSION_MS),
                "replica.lag.time.max.ms", Long.toString(SESSION_MS),
                "default.replication.factor", "3",
                "min.insync.replicas", "2",
                "auto.leader.rebalance.enable", "false"));
        cluster.startAll();
        for (int i = 0; i < 3; i++) {
            cluster.awaitReady(i, 3);
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void brokerRestartedWithEmptyLogDirsRejoinsEveryIsrAtTheThrottledRate() throws Exception {
        int wiped;
        List<Integer> others = new ArrayList<>();
        Map<TopicPartition, Long> leaderSizes = new HashMap<>();
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(30))) {
            List<NewTopic> topics = new ArrayList<>();
            for (String t : TOPICS) {
                topics.add(new NewTopic(t, PARTITIONS, (short) 3).configs(Map.of(
                        "min.insync.replicas", "2",
                        "leader.replication.throttled.replicas", "*",
                        "follower.replication.throttled.replicas", "*")));
            }
            admin.createTopics(topics).all().get();
            ConfigResource clusterDefault = new ConfigResource(ConfigResource.Type.BROKER, "");
            admin.incrementalAlterConfigs(Map.of(clusterDefault, List.of(
                    new AlterConfigOp(new ConfigEntry("leader.replication.throttled.rate", Long.toString(RATE)), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("follower.replication.throttled.rate", Long.toString(RATE)), AlterConfigOp.OpType.SET))))
                    .all().get();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).ignoreExceptions().untilAsserted(() ->
                    assertThat(describeAll(admin).values()).allSatisfy(p -> assertThat(p.isr()).hasSize(3)));
            produce();
            // the victim is not the active controller, so the quorum keeps its leader throughout
            int controller = admin.describeCluster().controller().get().id();
            wiped = controller == 2 ? 1 : 2;
            for (int i = 0; i < 3; i++) {
                if (i != wiped) {
                    others.add(i);
                }
            }
            Map<TopicPartition, TopicPartitionInfo> d = describeAll(admin);
            for (String t : TOPICS) {
                for (int p = 0; p < PARTITIONS; p++) {
                    TopicPartition tp = new TopicPartition(t, p);
                    TopicPartitionInfo info = d.get(tp);
                    assertThat(info.isr()).hasSize(3);
                    leaderSizes.put(tp, logBytes(info.leader().id(), tp));
                }
            }
        }
        long total = leaderSizes.values().stream().mapToLong(Long::longValue).sum();
        assertThat(total).isGreaterThan(20L * 1024 * 1024);

        long killedAt = System.nanoTime();
        cluster.kill(wiped);
        TestBroker.deleteRecursively(cluster.logDir(wiped));
        assertThat(Files.exists(cluster.logDir(wiped))).isFalse();
        cluster.start(wiped);

        try (Admin admin = cluster.admin(others, Duration.ofSeconds(10))) {
            // a new incarnation is never in sync: it leaves every ISR when it registers, long before
            // its session could expire or a leader could find it lagging
            await().atMost(Duration.ofSeconds(25)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().untilAsserted(() ->
                    assertThat(describeAll(admin).values()).allSatisfy(p ->
                            assertThat(p.isr()).as("ISR of %s", p).extracting(Node::id).doesNotContain(wiped)));
            long outOfIsrMs = (System.nanoTime() - killedAt) / 1_000_000;
            assertThat(outOfIsrMs).isLessThan(SESSION_MS);

            // sample what the new replica holds, and when it is back in each ISR
            List<long[]> samples = new ArrayList<>();
            Map<TopicPartition, Long> sizeWhenInSync = new HashMap<>();
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
                Map<TopicPartition, TopicPartitionInfo> d = describeAll(admin);
                long now = System.nanoTime();
                long bytes = 0;
                for (TopicPartition tp : leaderSizes.keySet()) {
                    long size = logBytes(wiped, tp);
                    bytes += size;
                    boolean inSync = d.get(tp).isr().stream().anyMatch(n -> n.id() == wiped);
                    if (inSync) {
                        sizeWhenInSync.putIfAbsent(tp, size);
                    }
                }
                samples.add(new long[]{now, bytes});
                boolean everyIsr = d.values().stream().allMatch(p -> p.isr().stream().anyMatch(n -> n.id() == wiped));
                return everyIsr && bytes >= total;
            });
            long rejoinedMs = (System.nanoTime() - killedAt) / 1_000_000;

            // the replica joined each ISR only with the whole log
            for (Map.Entry<TopicPartition, Long> e : leaderSizes.entrySet()) {
                assertThat(sizeWhenInSync.get(e.getKey())).as("bytes of %s on broker %d when it rejoined the ISR", e.getKey(), wiped)
                        .isGreaterThanOrEqualTo(e.getValue());
            }

            // the rate: over the first 10 s after the first bytes arrived, and over the whole catch-up
            long[] first = samples.stream().filter(s -> s[1] > 0).findFirst().orElseThrow();
            long[] atTen = samples.stream().filter(s -> s[0] - first[0] >= 10_000_000_000L).findFirst().orElseThrow();
            double windowSeconds = (atTen[0] - first[0]) / 1e9;
            double windowRate = (atTen[1] - first[1]) / windowSeconds;
            long[] done = samples.stream().filter(s -> s[1] >= total).findFirst().orElseThrow();
            double catchUpSeconds = (done[0] - first[0]) / 1e9;
            System.out.printf("EmptyDiskRejoinIT: broker %d restarted empty, out of every ISR %d ms after the kill; caught up %d"
                            + " bytes in %.1f s (%.0f B/s overall), %.0f B/s over the first %.1f s, throttle %d B/s; back in every"
                            + " ISR %d ms after the kill%n",
                    wiped, outOfIsrMs, total, catchUpSeconds, total / catchUpSeconds, windowRate, windowSeconds, RATE, rejoinedMs);
            assertThat(windowRate).isBetween(0.8 * RATE, 1.2 * RATE);
            assertThat(catchUpSeconds).isGreaterThanOrEqualTo(0.8 * total / RATE).isLessThan(2.0 * total / RATE);
        }
    }

    private static Map<TopicPartition, TopicPartitionInfo> describeAll(Admin admin) throws Exception {
        Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get();
        Map<TopicPartition, TopicPartitionInfo> out = new HashMap<>();
        for (TopicDescription d : admin.describeTopics(names).allTopicNames().get().values()) {
            for (TopicPartitionInfo p : d.partitions()) {
                out.put(new TopicPartition(d.name(), p.partition()), p);
            }
        }
        return out;
    }

    /** The bytes of a partition's log segments on a broker's disk (0 if it has none yet). */
    private long logBytes(int node, TopicPartition tp) throws IOException {
        Path dir = cluster.logDir(node).resolve(tp.topic() + "-" + tp.partition());
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(dir)) {
            long sum = 0;
            for (Path f : files.filter(f -> f.getFileName().toString().endsWith(".log")).toList()) {
                try {
                    sum += Files.size(f);
                } catch (java.nio.file.NoSuchFileException rolledAway) {
                    // a segment deleted between listing and sizing
                }
            }
            return sum;
        }
    }

    private void produce() throws Exception {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
        Random random = new Random(3);
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < RECORDS; i++) {
                byte[] value = new byte[RECORD_BYTES];
                random.nextBytes(value);
                producer.send(new ProducerRecord<>(TOPICS.get(i % TOPICS.size()), (i / TOPICS.size()) % PARTITIONS, null, value),
                        (md, e) -> {
                            if (e != null) {
                                failure.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
        }
        assertThat(failure.get()).as("a failed send").isNull();
    }
}
