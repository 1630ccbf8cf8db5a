package dev.skein.broker.it;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.server.Partition;
import dev.skein.broker.server.SkeinBroker;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Three brokers in this JVM on real sockets, sharing a test controller: an RF 3 topic with min ISR
 * 2, written by an idempotent acks=all producer, replicated by the followers' fetchers; followers
 * stopped and restarted; the leader fenced and replaced.
 */
class ReplicationIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String TOPIC = "replicated";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    private final SkeinBroker[] brokers = new SkeinBroker[3];
    private final int[] ports = new int[3];
    private Path root;
    private SharedTestController controller;

    @BeforeEach
    void startCluster() throws Exception {
        root = Files.createTempDirectory("skein-replication-it-");
        controller = new SharedTestController("replication-it-cluster", List.of(0, 1, 2), 1);
        for (int i = 0; i < 3; i++) {
            start(i);
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        for (int i = 0; i < 3; i++) {
            stop(i);
        }
        TestBroker.deleteRecursively(root);
    }

    private void start(int id) throws Exception {
        Map<String, String> p = TestBroker.baseProperties(root.resolve("b" + id), ports[id]);
        p.put("node.id", Integer.toString(id));
        p.put("controller.quorum.voters", "0@127.0.0.1:0");
        p.put("skein.cluster.id", "replication-it-cluster");
        p.put("offsets.topic.num.partitions", "1");
        p.put("replica.lag.time.max.ms", "2000");
        p.put("replica.fetch.wait.max.ms", "200");
        p.put("replica.fetch.backoff.ms", "100");
        SkeinBroker b = new SkeinBroker(new BrokerConfig(p), Time.SYSTEM, (cfg, clusterId, self) -> controller.forBroker(self));
        try {
            b.start();
        } catch (Exception e) {
            b.close();
            throw e;
        }
        brokers[id] = b;
        ports[id] = b.port();
    }

    private void stop(int id) {
        if (brokers[id] != null) {
            brokers[id].close();
            brokers[id] = null;
        }
    }

    private String bootstrap() {
        List<String> out = new ArrayList<>();
        for (int port : ports) {
            out.add("127.0.0.1:" + port);
        }
        return String.join(",", out);
    }

    private KafkaProducer<String, String> producer(Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 100);
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, 1_000);
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    private void createTopic() throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get();
        }
        await().atMost(WAIT).until(() -> partitionOn(0) != null && partitionOn(1) != null && partitionOn(2) != null);
    }

    private Partition partitionOn(int id) {
        SkeinBroker b = brokers[id];
        return b == null || b.replicaManager() == null ? null : b.replicaManager().partition(TP).orElse(null);
    }

    private PartitionRegistration registration() {
        return controller.partition(TP);
    }

    /** Offset → value of every record in a broker's log. */
    private Map<Long, String> logOf(int id) throws Exception {
        PartitionLog log = partitionOn(id).log();
        Map<Long, String> out = new LinkedHashMap<>();
        long offset = log.logStartOffset();
        long end = log.logEndOffset();
        while (offset < end) {
            Records chunk = log.read(offset, 1 << 20, end, true).records();
            long next = offset;
            for (RecordBatch batch : chunk.batches()) {
                for (Record r : batch) {
                    if (r.offset() >= offset) {
                        byte[] v = new byte[r.valueSize()];
                        r.value().get(v);
                        out.put(r.offset(), new String(v, StandardCharsets.UTF_8));
                    }
                }
                next = batch.nextOffset();
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
        return out;
    }

    /** The leader-side fetch sessions open on a broker, from its /metrics. */
    private int fetchSessionsOn(int id) throws Exception {
        return (int) BrokerMetrics.value(brokers[id].httpPort(), "kafka_server_fetchsessioncache_num_incremental_fetch_sessions");
    }

    private void awaitReplicasIdentical(int... ids) {
        await().atMost(WAIT).untilAsserted(() -> {
            Map<Long, String> first = logOf(ids[0]);
            for (int id : ids) {
                assertThat(logOf(id)).as("log of broker %d", id).isEqualTo(first);
            }
            Partition leader = partitionOn(registration().leader());
            assertThat(leader.highWatermark()).isEqualTo(leader.log().logEndOffset());
        });
    }

    private List<String> sendAll(KafkaProducer<String, String> producer, String prefix, int n) throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String v = prefix + "-" + i;
            values.add(v);
            futures.add(producer.send(new ProducerRecord<>(TOPIC, 0, "k" + i, v)));
        }
        for (Future<RecordMetadata> f : futures) {
            f.get();
        }
        return values;
    }

    @Test
    void replicatesToAllFollowersShrinksAndExpandsTheIsrAndFailsOverWithoutLosingAcknowledgedWrites() throws Exception {
        createTopic();
        int leader = registration().leader();
        int f1 = (leader + 1) % 3;
        int f2 = (leader + 2) % 3;
        List<String> acknowledged = new ArrayList<>();

        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            // every acknowledged record is on all three logs at the same offsets
            acknowledged.addAll(sendAll(producer, "first", 200));
            awaitReplicasIdentical(0, 1, 2);
            assertThat(logOf(leader).values()).containsExactlyElementsOf(acknowledged);
            assertThat(registration().isr()).hasSize(3);
            // each follower replicates through an incremental fetch session (KIP-227) with the leader
            assertThat(fetchSessionsOn(leader)).isGreaterThanOrEqualTo(2);

            // one follower down: as in Kafka, the leader drops it from the ISR once it has not caught up
            // with new writes for replica.lag.time.max.ms; the waiting acks=all writes then succeed with min ISR 2
            stop(f2);
            acknowledged.addAll(sendAll(producer, "two-of-three", 50));
            assertThat(registration().isr()).hasSize(2).doesNotContain(f2);

            // two followers down: an acks=1 write appends, but the high watermark holds below min ISR,
            // and once the ISR is the leader alone acks=all is refused before the append
            stop(f1);
            long hw = partitionOn(leader).highWatermark();
            try (KafkaProducer<String, String> strict = producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                    ProducerConfig.RETRIES_CONFIG, 0, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000));
                 KafkaProducer<String, String> leaderOnly = producer(Map.of(ProducerConfig.ACKS_CONFIG, "1",
                         ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false))) {
                leaderOnly.send(new ProducerRecord<>(TOPIC, 0, "k", "leader-only")).get();
                acknowledged.add("leader-only");
                await().atMost(WAIT).until(() -> registration().isr().equals(List.of(leader)));
                assertThat(partitionOn(leader).log().logEndOffset()).isEqualTo(hw + 1);
                assertThat(partitionOn(leader).highWatermark()).as("no advance below min ISR").isEqualTo(hw);
                assertThatThrownBy(() -> strict.send(new ProducerRecord<>(TOPIC, 0, "k", "refused")).get())
                        .hasCauseInstanceOf(NotEnoughReplicasException.class);
                assertThat(partitionOn(leader).log().logEndOffset()).isEqualTo(hw + 1);
            }

            // both back: they catch up and rejoin the ISR
            start(f1);
            start(f2);
            await().atMost(WAIT).until(() -> registration().isr().size() == 3);
            awaitReplicasIdentical(0, 1, 2);
            acknowledged.addAll(sendAll(producer, "rejoined", 50));
            awaitReplicasIdentical(0, 1, 2);
            assertThat(logOf(leader).values()).containsExactlyElementsOf(acknowledged);

            // the leader gets an uncommitted tail while both followers are away, then is fenced
            stop(f1);
            stop(f2);
            try (KafkaProducer<String, String> leaderOnly = producer(Map.of(ProducerConfig.ACKS_CONFIG, "1",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false))) {
                for (int i = 0; i < 5; i++) {
                    leaderOnly.send(new ProducerRecord<>(TOPIC, 0, "k", "uncommitted-" + i)).get();
                }
            }
            assertThat(registration().isr()).as("fenced before the lag timeout").hasSize(3);
            long committedEnd = partitionOn(leader).highWatermark();
            assertThat(partitionOn(leader).log().logEndOffset()).isEqualTo(committedEnd + 5);
            controller.fence(leader);
            PartitionRegistration afterFence = registration();
            assertThat(afterFence.leader()).isIn(f1, f2);
            assertThat(afterFence.isr()).doesNotContain(leader);
            int newLeader = afterFence.leader();
            start(f1);
            start(f2);

            // writes continue on the new leader; the idempotent producer's retries are not duplicated
            acknowledged.addAll(sendAll(producer, "new-leader", 50));
            controller.unfence(leader);
            await().atMost(WAIT).until(() -> registration().isr().size() == 3);
            awaitReplicasIdentical(0, 1, 2);
            Map<Long, String> finalLog = logOf(newLeader);
            assertThat(finalLog.values()).as("every acknowledged record once, in order; the old leader's tail is gone")
                    .containsExactlyElementsOf(acknowledged);
            assertThat(logOf(leader)).isEqualTo(finalLog);
        }
    }
}
