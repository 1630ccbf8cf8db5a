package dev.skein.broker.it;

import dev.skein.broker.checker.LogChecker;
import dev.skein.broker.checker.LogHistory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three brokers, each its own JVM and a controller voter; a topic with RF 3 and min ISR 2; an
 * idempotent acks=all producer and a consumer running while partition leaders are killed with
 * SIGKILL and restarted. A checker then proves, from what the clients saw and from every replica's
 * log, that no acknowledged record was lost, none duplicated, and every offset holds one value on
 * every replica and for the consumer.
 */
class FailoverIT {
    private static final String TOPIC = "jepsen";
    private static final int PARTITIONS = 3;

    private ClusterProcesses cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = new ClusterProcesses(3, Map.of(
                "broker.heartbeat.interval.ms", "250",
                "broker.session.timeout.ms", "3000",
                "replica.lag.time.max.ms", "3000",
                "default.replication.factor", "3",
                "min.insync.replicas", "2",
                "auto.leader.rebalance.enable", "false"));
        cluster.startAll();
        for (int i = 0; i < 3; i++) {
            cluster.awaitReady(i, 3);
        }
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(30))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get();
            awaitFullIsr(admin);
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Map<Integer, TopicPartitionInfo> describe(Admin admin) throws Exception {
        return TopicPartitions.describe(admin, TOPIC);
    }

    private static void awaitFullIsr(Admin admin) {
        TopicPartitions.awaitFullIsr(admin, TOPIC, 3);
    }

    private KafkaProducer<String, String> producer() {
        return cluster.checkedProducer(10_000);
    }

    @Test
    void noAcknowledgedWriteIsLostWhileLeadersAreKilledAndRestarted() throws Exception {
        LogHistory history = new LogHistory();
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicInteger sent = new AtomicInteger();
        AtomicLong lastAckNanos = new AtomicLong();
        Map<Integer, AtomicLong> lastAckOfPartition = new HashMap<>();
        // failover time: from the kill to the first acknowledgement of a record sent after the kill
        // (so it cannot be a response the old leader had already sent)
        AtomicLong killedAtNanos = new AtomicLong(Long.MAX_VALUE);
        AtomicInteger killedPartition = new AtomicInteger(-1);
        AtomicLong firstAckAfterKill = new AtomicLong();
        for (int p = 0; p < PARTITIONS; p++) {
            lastAckOfPartition.put(p, new AtomicLong());
        }

        Thread producerThread = new Thread(() -> {
            try (KafkaProducer<String, String> producer = producer()) {
                int n = 0;
                while (producing.get()) {
                    String value = "v-" + n;
                    int partition = n % PARTITIONS;
                    n++;
                    sent.incrementAndGet();
                    long sentAt = System.nanoTime();
                    producer.send(new ProducerRecord<>(TOPIC, partition, "k" + partition, value), (md, e) -> {
                        if (e == null) {
                            history.acked(value, md.partition(), md.offset());
                            long now = System.nanoTime();
                            lastAckNanos.set(now);
                            lastAckOfPartition.get(md.partition()).set(now);
                            if (md.partition() == killedPartition.get() && sentAt > killedAtNanos.get()) {
                                firstAckAfterKill.compareAndSet(0, now);
                            }
                        } else if (e instanceof TimeoutException) {
                            history.unknown(value, partition);
                        } else {
                            // an error after retries: the record may still have been written before the failure
                            history.unknown(value, partition);
                        }
                    });
                    if (n % 200 == 0) {
                        producer.flush();
                    }
                }
                producer.flush();
            }
        }, "failover-producer");

        producerThread.start();
        HistoryReader consumer = HistoryReader.start(cluster, history, TOPIC, PARTITIONS, "failover-consumer");
        List<Long> failoverMs = new ArrayList<>();
        Random random = new Random(20261129L);
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(20))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> lastAckNanos.get() != 0);
            for (int round = 0; round < 3; round++) {
                int partition = random.nextInt(PARTITIONS);
                int leader = describe(admin).get(partition).leader().id();
                long ackBefore = lastAckOfPartition.get(partition).get();
                firstAckAfterKill.set(0);
                killedPartition.set(partition);
                long killedAt = System.nanoTime();
                killedAtNanos.set(killedAt);
                cluster.kill(leader);
                // failover time: from the kill to the first acknowledged write on the new leader
                await().atMost(Duration.ofSeconds(60)).until(() -> firstAckAfterKill.get() != 0);
                failoverMs.add((firstAckAfterKill.get() - killedAt) / 1_000_000);
                killedAtNanos.set(Long.MAX_VALUE);
                assertThat(lastAckOfPartition.get(partition).get()).isGreaterThan(ackBefore);
                cluster.start(leader);
                cluster.awaitReady(leader, 3);
                awaitFullIsr(admin);
            }
        } finally {
            producing.set(false);
            producerThread.join(120_000);
        }
        // let the consumer reach the end before stopping it
        consumer.drainAndStop();
        long acked = history.ackedCount();
        System.out.printf("FailoverIT: sent %d, acknowledged %d, failover times after SIGKILL (ms): %s%n",
                sent.get(), acked, failoverMs);

        // every replica's log, read from disk after a clean stop, must agree offset by offset
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(20))) {
            awaitFullIsr(admin);
        }
        for (int node = 0; node < 3; node++) {
            cluster.stop(node);
        }
        for (int node = 0; node < 3; node++) {
            for (int p = 0; p < PARTITIONS; p++) {
                readReplica(history, node, p);
            }
        }
        List<LogChecker.Anomaly> anomalies = LogChecker.check(history);
        assertThat(anomalies).as("anomalies").isEmpty();
        assertThat(acked).isGreaterThan(1000);
        assertThat(failoverMs).allSatisfy(ms -> assertThat(ms).isLessThan(30_000));
    }

    /**
     * A leader killed and restarted must not act on the metadata it replays from its own log: in
     * that old image it still leads partitions whose logs have since moved on elsewhere, and a
     * client that believed it (a consumer whose position is past the old log end) would be told
     * OFFSET_OUT_OF_RANGE and reset to the beginning. From its first answer on, the restarted
     * broker must name the current leader.
     */
    @Test
    void aRestartedLeaderAnswersOnlyFromCaughtUpMetadata() throws Exception {
        int partition = 0;
        int oldLeader;
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(20));
             KafkaProducer<String, String> producer = producer()) {
            oldLeader = describe(admin).get(partition).leader().id();
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>(TOPIC, partition, "k", "before-" + i));
            }
            producer.flush();
            cluster.kill(oldLeader);
            // the new leader takes writes the old one never sees
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>(TOPIC, partition, "k", "after-" + i)).get(60, TimeUnit.SECONDS);
            }
        }
        MetadataResponseData.MetadataResponsePartition current = metadataOf(cluster.port((oldLeader + 1) % 3), partition);
        assertThat(current.leaderId()).isNotEqualTo(oldLeader);

        cluster.start(oldLeader);
        List<MetadataResponseData.MetadataResponsePartition> answers = new ArrayList<>();
        // ask the restarted broker as early as it accepts connections, until it answers as a caught-up member
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20)).ignoreExceptions().until(() -> {
            MetadataResponseData.MetadataResponsePartition p = metadataOf(cluster.port(oldLeader), partition);
            answers.add(p);
            return p.leaderEpoch() >= current.leaderEpoch() && p.isrNodes().contains(oldLeader);
        });
        assertThat(answers).allSatisfy(p -> {
            assertThat(p.leaderId()).as("leader named by the restarted broker").isNotEqualTo(oldLeader);
            assertThat(p.leaderEpoch()).as("leader epoch named by the restarted broker").isGreaterThanOrEqualTo(current.leaderEpoch());
        });
    }

    private static MetadataResponseData.MetadataResponsePartition metadataOf(int port, int partition) throws Exception {
        try (KafkaWire wire = new KafkaWire(port)) {
            MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(false);
            request.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(TOPIC));
            MetadataResponseData response = wire.call(ApiKeys.METADATA, (short) 12, request);
            MetadataResponseData.MetadataResponseTopic topic = response.topics().find(TOPIC);
            assertThat(topic).isNotNull();
            assertThat(topic.errorCode()).isZero();
            return topic.partitions().stream().filter(p -> p.partitionIndex() == partition).findFirst().orElseThrow();
        }
    }

    @Test
    void withTwoOfThreeBrokersDownAcksAllWritesAreRefusedAndTheIsrRefillsWhenTheyReturn() throws Exception {
        int survivor;
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(20))) {
            survivor = describe(admin).get(0).leader().id();
        }
        List<Integer> down = new ArrayList<>(List.of(0, 1, 2));
        down.remove(Integer.valueOf(survivor));
        for (int node : down) {
            cluster.kill(node);
        }
        Map<String, Object> strict = new HashMap<>();
        strict.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(List.of(survivor)));
        strict.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        strict.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        strict.put(ProducerConfig.ACKS_CONFIG, "all");
        // not idempotent: a producer id needs the controller quorum, which two dead voters also took down
        strict.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        strict.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        strict.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 12_000);
        strict.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(strict)) {
            // the survivor cannot reach min.insync.replicas=2 (and without a controller quorum nothing changes)
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> producer.send(new ProducerRecord<>(TOPIC, 0, "k", "refused")).get(60, java.util.concurrent.TimeUnit.SECONDS))
                    .isInstanceOf(java.util.concurrent.ExecutionException.class);
        }
        for (int node : down) {
            cluster.start(node);
        }
        for (int node = 0; node < 3; node++) {
            cluster.awaitReady(node, 3);
        }
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(20))) {
            awaitFullIsr(admin);
        }
        try (KafkaProducer<String, String> producer = producer()) {
            assertThat(producer.send(new ProducerRecord<>(TOPIC, 0, "k", "accepted")).get().offset()).isGreaterThanOrEqualTo(0);
        }
    }

    private void readReplica(LogHistory history, int node, int partition) throws Exception {
        ReplicaLogs.read(history, "replica-" + node, cluster.logDir(node), TOPIC, partition);
    }
}
