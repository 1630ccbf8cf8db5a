package dev.skein.broker.it;

import dev.skein.broker.checker.LogChecker;
import dev.skein.broker.checker.LogHistory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Three brokers, each a controller voter in its own network namespace; a topic with RF 3 and min
 * ISR 2 under an idempotent acks=all producer. The leader of a partition (the active controller,
 * when it leads one) is cut off from the other two brokers by blackhole routes while the test's
 * clients still reach it. A raw acks=all producer pinned to it proves it stops acknowledging (and,
 * once its session has run out without the quorum, refuses writes before appending them); the
 * majority elects a new leader and goes on acknowledging; after the partition heals the old leader
 * truncates to the new leader's log and rejoins every ISR; the checker proves that no acknowledged
 * record was lost or duplicated and every offset holds one value on every replica.
 */
class NetworkPartitionIT {
    private static final String TOPIC = "partitioned";
    private static final int PARTITIONS = 3;
    /** After the cut, an acknowledgement already on its way may still arrive; none may come later. */
    private static final long ACK_BOUND_MS = 2_000;
    /** What the raw producer asks the broker to wait for replication (its produce timeout). */
    private static final int PINNED_TIMEOUT_MS = 2_000;
    private static final Set<Errors> REFUSALS = EnumSet.of(Errors.REQUEST_TIMED_OUT, Errors.NOT_ENOUGH_REPLICAS,
            Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.NOT_LEADER_OR_FOLLOWER);

    private NamespaceNetwork net;
    private ClusterProcesses cluster;

    @BeforeEach
    void startCluster() throws Exception {
        var unavailable = NamespaceNetwork.unavailableReason();
        assumeTrue(unavailable.isEmpty(), () -> "skipping the network-partition test: " + unavailable.orElse(""));
        net = NamespaceNetwork.create(3);
        cluster = ClusterProcesses.inNamespaces("np-partition-", net, Map.of(
                "broker.heartbeat.interval.ms", "250",
                "broker.session.timeout.ms", "3000",
                "replica.lag.time.max.ms", "3000",
                "default.replication.factor", "3",
                "min.insync.replicas", "2",
                "auto.leader.rebalance.enable", "false"));
        cluster.startAll();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.awaitReady(i, 3);
            }
            try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(30))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2")))).all().get();
                awaitFullIsr(admin);
            }
        } catch (Throwable t) {
            dumpLogs();
            throw t;
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        try {
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            if (net != null) {
                net.close();
            }
        }
    }

    @Test
    void isolatedLeaderStopsAcknowledgingAndNoAcknowledgedWriteIsLost() throws Exception {
        LogHistory history = new LogHistory();
        Map<Integer, List<Long>> ackTimes = new ConcurrentHashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            ackTimes.put(p, new CopyOnWriteArrayList<>());
        }
        AtomicBoolean running = new AtomicBoolean(true);
        Thread producer = new Thread(() -> produce(history, ackTimes, running), "np-producer");
        producer.start();
        HistoryReader consumer = HistoryReader.start(cluster, history, TOPIC, PARTITIONS, "np-consumer");

        int victim;
        int partition;
        boolean victimWasController;
        try (Admin admin = cluster.admin(List.of(0, 1, 2), Duration.ofSeconds(20))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> ackTimes.values().stream().allMatch(l -> l.size() > 50));
            // the hardest case: the leader that is also the active controller, if it leads a partition
            int controller = admin.describeCluster().controller().get().id();
            Map<Integer, TopicPartitionInfo> d = describe(admin);
            partition = d.values().stream().filter(p -> p.leader().id() == controller).mapToInt(TopicPartitionInfo::partition)
                    .findFirst().orElse(0);
            victim = d.get(partition).leader().id();
            victimWasController = victim == controller;
        }
        List<Integer> majority = new ArrayList<>(List.of(0, 1, 2));
        majority.remove(Integer.valueOf(victim));

        PinnedProducer pinned = new PinnedProducer(cluster.host(victim), cluster.port(victim), partition, history);
        Thread pinnedThread = new Thread(pinned, "np-pinned-producer");
        pinnedThread.start();
        long isolatedAt;
        long electedAt;
        long healedAt;
        long rejoinedAt;
        int newLeader;
        try {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(pinned.acks)
                    .as("acknowledgements of the pinned producer (refusals %s, last failure %s)", pinned.refusals, pinned.lastFailure)
                    .hasSizeGreaterThanOrEqualTo(3));

            isolatedAt = System.nanoTime();
            net.isolate(victim);

            // asked of the majority's brokers themselves: an Admin client may put the question to the
            // isolated broker, which still names itself
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() ->
                    majority.stream().allMatch(n -> {
                        int leader = leaderAsSeenBy(n, partition);
                        return leader >= 0 && leader != victim;
                    }));
            electedAt = System.nanoTime();
            newLeader = leaderAsSeenBy(majority.getFirst(), partition);
            long boundNanos = TimeUnit.MILLISECONDS.toNanos(ACK_BOUND_MS);
            // the majority acknowledges again, the isolated leader has been refusing for a while
            await().atMost(Duration.ofSeconds(60)).until(() -> ackTimes.get(partition).stream()
                    .filter(t -> t > isolatedAt + boundNanos).count() > 100);
            await().atMost(Duration.ofSeconds(60)).until(() -> pinned.refusedSince(isolatedAt) >= 3
                    && pinned.firstRefusal(Errors.NOT_LEADER_OR_FOLLOWER, isolatedAt) > 0
                    && System.nanoTime() - isolatedAt > TimeUnit.SECONDS.toNanos(8));

            healedAt = System.nanoTime();
            net.healAll();
            // the majority's view: the healed broker's own metadata still shows the full ISR of before
            // the cut until it catches up with the quorum. Back in an ISR means its log was truncated
            // to the new leader's and caught up (the leader lets no diverging follower in).
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() ->
                    majority.stream().allMatch(n -> isrSizesAsSeenBy(n).values().stream().allMatch(size -> size == 3)));
            rejoinedAt = System.nanoTime();
        } catch (Throwable t) {
            consumer.stop();
            dumpLogs();
            throw t;
        } finally {
            pinned.stop();
            pinnedThread.join(30_000);
            running.set(false);
            producer.join(120_000);
        }
        consumer.drainAndStop();
        long acked = history.ackedCount();

        Map<Errors, Integer> duringPartition = pinned.refusalsBetween(isolatedAt, healedAt);
        long lastPinnedAck = pinned.acks.stream().mapToLong(Long::longValue).max().orElse(0);
        long firstAckAfterCut = ackTimes.get(partition).stream()
                .filter(t -> t > isolatedAt + TimeUnit.MILLISECONDS.toNanos(ACK_BOUND_MS)).mapToLong(Long::longValue).min()
                .orElseThrow();
        long selfFenced = pinned.firstRefusal(Errors.NOT_LEADER_OR_FOLLOWER, isolatedAt);
        System.out.printf("NetworkPartitionIT: isolated broker %d (leader of partition %d%s); new leader %d elected %d ms after"
                        + " the cut; first acknowledged write on it %d ms after the cut; last acknowledgement from the isolated"
                        + " leader %d ms after the cut; it refused writes without appending from %d ms after the cut; %d pinned"
                        + " writes refused while it was cut off (%s); full ISR %d ms after healing; %d records acknowledged%n",
                victim, partition, victimWasController ? ", the active controller" : "", newLeader,
                (electedAt - isolatedAt) / 1_000_000, (firstAckAfterCut - isolatedAt) / 1_000_000,
                (lastPinnedAck - isolatedAt) / 1_000_000, (selfFenced - isolatedAt) / 1_000_000,
                duringPartition.values().stream().mapToInt(Integer::intValue).sum(), duringPartition,
                (rejoinedAt - healedAt) / 1_000_000, acked);

        assertThat(pinned.acks).as("acknowledgements from the isolated leader more than %d ms after the cut", ACK_BOUND_MS)
                .allSatisfy(t -> assertThat(t).isLessThan(isolatedAt + TimeUnit.MILLISECONDS.toNanos(ACK_BOUND_MS)));
        assertThat(duringPartition.keySet()).as("how the isolated leader refused while cut off").isNotEmpty()
                .isSubsetOf(REFUSALS);
        assertThat(pinned.refusals.keySet()).as("how the old leader refused").isSubsetOf(REFUSALS);
        // out of touch with the quorum for longer than its session, it takes no writes at all
        assertThat(duringPartition).as("refusals before appending while cut off").containsKey(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(newLeader).isNotEqualTo(victim);

        for (int node = 0; node < 3; node++) {
            cluster.stop(node);
        }
        for (int node = 0; node < 3; node++) {
            for (int p = 0; p < PARTITIONS; p++) {
                ReplicaLogs.read(history, "replica-" + node, cluster.logDir(node), TOPIC, p);
            }
        }
        List<LogChecker.Anomaly> anomalies = LogChecker.check(history);
        assertThat(anomalies).as("anomalies").isEmpty();
    }

    private void dumpLogs() throws IOException {
        System.out.println(net.describe());
        for (int i = 0; i < cluster.size(); i++) {
            System.out.println(cluster.log(i));
            System.out.println("--- threads of node " + i + "\n" + cluster.threadDump(i));
        }
    }

    private void produce(LogHistory history, Map<Integer, List<Long>> ackTimes, AtomicBoolean running) {
        try (KafkaProducer<String, String> producer = cluster.checkedProducer(4_000)) {
            int n = 0;
            while (running.get()) {
                String value = "v-" + n;
                int partition = n % PARTITIONS;
                n++;
                producer.send(new ProducerRecord<>(TOPIC, partition, "k" + partition, value), (md, e) -> {
                    if (e == null) {
                        history.acked(value, md.partition(), md.offset());
                        ackTimes.get(md.partition()).add(System.nanoTime());
                    } else {
                        // a timeout or an error after retries: the record may still have been written
                        history.unknown(value, partition);
                    }
                });
                if (n % 100 == 0) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }

    /**
     * Writes one record at a time with acks=all straight to one broker over a bare connection, so
     * no client logic moves it to another leader: it shows exactly when that broker acknowledges.
     */
    private static final class PinnedProducer implements Runnable {
        private static final short VERSION = 9;
        final List<Long> acks = new CopyOnWriteArrayList<>();
        final Map<Errors, Integer> refusals = new ConcurrentHashMap<>();
        private final List<Map.Entry<Long, Errors>> refused = new CopyOnWriteArrayList<>();
        private final String host;
        private final int port;
        private final int partition;
        private final LogHistory history;
        private volatile boolean running = true;
        private volatile KafkaWire wire;
        volatile String lastFailure;

        PinnedProducer(String host, int port, int partition, LogHistory history) {
            this.host = host;
            this.port = port;
            this.partition = partition;
            this.history = history;
        }

        long refusedSince(long nanos) {
            return refused.stream().filter(e -> e.getKey() > nanos).count();
        }

        /** When the broker first refused a write with {@code error} after {@code fromNanos}, or -1. */
        long firstRefusal(Errors error, long fromNanos) {
            return refused.stream().filter(e -> e.getValue() == error && e.getKey() > fromNanos).mapToLong(Map.Entry::getKey)
                    .min().orElse(-1);
        }

        /** How the broker refused the writes it answered between the two instants. */
        Map<Errors, Integer> refusalsBetween(long fromNanos, long toNanos) {
            Map<Errors, Integer> out = new java.util.TreeMap<>();
            refused.stream().filter(e -> e.getKey() > fromNanos && e.getKey() < toNanos)
                    .forEach(e -> out.merge(e.getValue(), 1, Integer::sum));
            return out;
        }

        void stop() throws IOException {
            running = false;
            KafkaWire w = wire;
            if (w != null) {
                w.close();
            }
        }

        @Override
        public void run() {
            AtomicInteger n = new AtomicInteger();
            while (running) {
                String value = "pinned-" + n.getAndIncrement();
                try {
                    if (wire == null) {
                        wire = new KafkaWire(host, port);
                    }
                    ProduceRequestData request = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(PINNED_TIMEOUT_MS);
                    ProduceRequestData.TopicProduceData td = new ProduceRequestData.TopicProduceData().setName(TOPIC);
                    td.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(
                            MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8)))));
                    request.topicData().add(td);
                    ProduceResponseData response = wire.call(ApiKeys.PRODUCE, VERSION, request);
                    long now = System.nanoTime();
                    ProduceResponseData.PartitionProduceResponse pr = response.responses().iterator().next()
                            .partitionResponses().getFirst();
                    Errors error = Errors.forCode(pr.errorCode());
                    if (error == Errors.NONE) {
                        history.acked(value, partition, pr.baseOffset());
                        acks.add(now);
                    } else {
                        history.unknown(value, partition);
                        lastFailure = error + ": " + pr.errorMessage();
                        refusals.merge(error, 1, Integer::sum);
                        refused.add(Map.entry(now, error));
                    }
                } catch (IOException | RuntimeException e) {
                    history.unknown(value, partition);
                    lastFailure = e.toString();
                    KafkaWire w = wire;
                    wire = null;
                    if (w != null) {
                        try {
                            w.close();
                        } catch (IOException ignored) {
                            // reconnect next round
                        }
                    }
                    if (running) {
                        await().pollDelay(Duration.ofMillis(100)).until(() -> true);
                    }
                }
            }
        }
    }

    /** The leader of {@code partition} in the metadata of broker {@code node} (-1 if it names none). */
    private int leaderAsSeenBy(int node, int partition) {
        return partitionsAsSeenBy(node).stream().filter(p -> p.partitionIndex() == partition)
                .mapToInt(MetadataResponseData.MetadataResponsePartition::leaderId).findFirst().orElse(-1);
    }

    /** The ISR size of each partition of the topic in the metadata of broker {@code node}. */
    private Map<Integer, Integer> isrSizesAsSeenBy(int node) {
        Map<Integer, Integer> out = new HashMap<>();
        partitionsAsSeenBy(node).forEach(p -> out.put(p.partitionIndex(), p.isrNodes().size()));
        assertThat(out).hasSize(PARTITIONS);
        return out;
    }

    /** The topic's partitions as broker {@code node} describes them (Metadata asked of that broker alone). */
    private List<MetadataResponseData.MetadataResponsePartition> partitionsAsSeenBy(int node) {
        try (KafkaWire wire = new KafkaWire(cluster.host(node), cluster.port(node))) {
            MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(false);
            request.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(TOPIC));
            MetadataResponseData response = wire.call(ApiKeys.METADATA, (short) 12, request);
            return response.topics().find(TOPIC).partitions();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Map<Integer, TopicPartitionInfo> describe(Admin admin) throws Exception {
        return TopicPartitions.describe(admin, TOPIC);
    }

    private static void awaitFullIsr(Admin admin) {
        TopicPartitions.awaitFullIsr(admin, TOPIC, 3);
    }
}
