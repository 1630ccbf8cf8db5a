package dev.skein.broker.replication;

import dev.skein.broker.controller.BrokerHeartbeat;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.server.FetchRequestPartition;
import dev.skein.broker.server.FetchResult;
import dev.skein.broker.server.LogManager;
import dev.skein.broker.server.ProduceResult;
import dev.skein.broker.server.ReplicaManager;
import dev.skein.broker.testing.ManualTime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The leader's side of replication in the replica manager, on a real log: acks=all waits for the
 * ISR's fetches, follower fetches move the high watermark, lagging followers are dropped through
 * the controller, and waiting produces are answered when the ISR falls below min ISR, when their
 * timeout passes, or when the leadership moves.
 */
class LeaderProduceTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final long LAG_MS = 100;

    @TempDir
    Path dir;
    private final ManualTime time = new ManualTime(1_000_000);
    private ScheduledExecutorService scheduler;
    private LogManager logManager;
    private ReplicaManager rm;
    private FakeController controller;
    private SimpleMeterRegistry registry;
    private ReplicaFetcherManager fetchers;

    @BeforeEach
    void setUp() throws Exception {
        scheduler = Executors.newScheduledThreadPool(2);
        start(scheduler);
    }

    /** The replica manager of broker 0, leading {@link #TP} with followers 1 and 2; waiting fetches re-read on {@code purgatory}. */
    private void start(Executor purgatory) throws Exception {
        logManager = new LogManager(List.of(dir), time);
        logManager.scan();
        registry = new SimpleMeterRegistry();
        rm = new ReplicaManager(0, logManager, Map.of(), time, scheduler, purgatory, registry);
        controller = new FakeController(new PartitionRegistration(List.of(0, 1, 2), List.of(0, 1, 2), 0, 0, 0, List.of(), List.of()));
        ReplicationConfig config = new ReplicationConfig(LAG_MS, 100, 1, 1 << 20, 1 << 20, 50, 1_000, -1);
        fetchers = new ReplicaFetcherManager(0, rm, config, time);
        rm.enableReplication(controller, fetchers, config);
        rm.applyImage(controller.image());
        controller.addListener(rm::applyImage);
    }

    private void stop() throws Exception {
        fetchers.close();
        rm.close();
        logManager.close();
    }

    @AfterEach
    void tearDown() throws Exception {
        stop();
        scheduler.shutdownNow();
    }

    private static MemoryRecords records(String... values) {
        SimpleRecord[] r = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            r[i] = new SimpleRecord(values[i].getBytes());
        }
        return MemoryRecords.withRecords(Compression.NONE, r);
    }

    private CompletableFuture<ProduceResult> produce(long timeoutMs, String... values) {
        return rm.appendAsync(Map.of(TP, records(values)), (short) -1, timeoutMs).thenApply(m -> m.get(TP));
    }

    private FetchResult followerFetch(int replica, long offset) throws Exception {
        FetchRequestPartition r = new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, TP), offset, 1 << 20,
                Optional.of(controller.registration.leaderEpoch()), 0);
        return rm.fetch(replica, List.of(r), 0, 1, 1 << 20).get().get(0);
    }

    private long highWatermark() {
        return rm.partition(TP).orElseThrow().highWatermark();
    }

    @Test
    void acksAllWaitsUntilTheWholeIsrHasTheRecords() throws Exception {
        CompletableFuture<ProduceResult> f = produce(30_000, "a", "b");
        assertThat(f).isNotDone();
        FetchResult r1 = followerFetch(1, 0);
        assertThat(r1.bytes()).as("followers read beyond the high watermark").isPositive();
        assertThat(r1.highWatermark()).isZero();
        followerFetch(1, 2);
        assertThat(f).isNotDone();
        assertThat(highWatermark()).isZero();
        followerFetch(2, 2);
        assertThat(highWatermark()).isEqualTo(2);
        ProduceResult done = f.get();
        assertThat(done.error()).isEqualTo(Errors.NONE);
        assertThat(done.baseOffset()).isZero();
    }

    @Test
    void aLeaderOutOfTouchWithTheControllerQuorumRefusesWritesBeforeAppending() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean outOfTouch = new java.util.concurrent.atomic.AtomicBoolean(true);
        rm.refuseWritesWhile(outOfTouch::get);
        ProduceResult refused = produce(30_000, "cut-off").get();
        assertThat(refused.error()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(rm.partition(TP).orElseThrow().log().logEndOffset()).as("nothing appended").isZero();

        outOfTouch.set(false);
        CompletableFuture<ProduceResult> accepted = produce(30_000, "back");
        followerFetch(1, 1);
        followerFetch(2, 1);
        assertThat(accepted.get().error()).isEqualTo(Errors.NONE);
    }

    @Test
    void laggingFollowersLeaveTheIsrAndWaitingProducesFailOnceBelowMinIsr() throws Exception {
        controller.setMinIsr("2");
        followerFetch(1, 0);
        followerFetch(2, 0);
        CompletableFuture<ProduceResult> f = produce(30_000, "a");
        time.advance(LAG_MS + 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> controller.registration.isr().equals(List.of(0)));
        assertThat(f.get().error()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        assertThat(highWatermark()).isZero();
        assertThat(registry.get("kafka.server.replicamanager.under.replicated.partitions").gauge().value()).isEqualTo(1.0);
        await().atMost(Duration.ofSeconds(10)).until(() ->
                registry.get("kafka.server.replicamanager.isr.shrinks").counter().count() == 1.0);
        assertThat(produce(30_000, "refused").get().error()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS);

        // a follower that catches up joins the ISR again
        followerFetch(1, 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> controller.registration.isr().equals(List.of(0, 1)));
        await().atMost(Duration.ofSeconds(10)).until(() -> highWatermark() == 1
                && registry.get("kafka.server.replicamanager.isr.expands").counter().count() == 1.0);
    }

    /**
     * A follower fetch that waits is re-read on every append; the re-read must not record its (by then
     * old) fetch offset again: the follower may have fetched further meanwhile, and moving its log end
     * offset back held the high watermark, and every acks=all produce, until the follower's next long
     * poll expired (the 0.5 s end-to-end tail in bench/README.md).
     */
    @Test
    void reReadingAWaitingFollowerFetchDoesNotMoveTheFollowerBack() throws Exception {
        stop();
        start(Runnable::run); // waiting fetches re-read on the appending thread: the interleaving below is fixed
        CompletableFuture<ProduceResult> abc = produce(30_000, "a", "b", "c");
        followerFetch(2, 3);
        // follower 1 long-polls at offset 3 for more bytes than will come: its fetch stays waiting
        FetchRequestPartition at3 = new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, TP), 3, 1 << 20, Optional.of(0), 0);
        var waiting = rm.fetch(1, List.of(at3), 30_000, 1 << 20, 1 << 20);
        assertThat(abc.get().error()).isEqualTo(Errors.NONE);
        assertThat(waiting).isNotDone();

        CompletableFuture<ProduceResult> d = produce(30_000, "d");
        followerFetch(1, 4); // follower 1 is at 4 now
        followerFetch(2, 4);
        assertThat(d.get().error()).isEqualTo(Errors.NONE);

        CompletableFuture<ProduceResult> e = produce(30_000, "e");
        followerFetch(1, 5);
        produce(30_000, "f"); // re-reads the waiting fetch at offset 3
        followerFetch(2, 5);
        assertThat(highWatermark()).as("both followers hold 5 records").isEqualTo(5);
        assertThat(e.get().error()).isEqualTo(Errors.NONE);
        assertThat(waiting).isNotDone();
    }

    private double waitingFetchReads() {
        return registry.get("skein.fetch.waiting.reads").counter().count();
    }

    @Test
    void aWaitingConsumerFetchIsReadOnlyOnceTheHighWatermarkGivesItRecords() throws Exception {
        stop();
        start(Runnable::run); // waiting fetches re-read on the thread that wakes them
        FetchRequestPartition at0 = new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, TP), 0, 1 << 20, Optional.of(0));
        var waiting = rm.fetch(-1, List.of(at0), 30_000, 1, 1 << 20);
        assertThat(waiting).isNotDone();
        assertThat(waitingFetchReads()).as("nothing to read when it started waiting").isZero();

        CompletableFuture<ProduceResult> ab = produce(30_000, "a", "b");
        followerFetch(1, 0);
        assertThat(waiting).as("appended, but not committed: a consumer may not see it").isNotDone();
        assertThat(waitingFetchReads()).as("the append and the follower's fetch woke it, a read could not complete it").isZero();

        followerFetch(1, 2);
        followerFetch(2, 2); // the high watermark moves to 2
        assertThat(ab.get().error()).isEqualTo(Errors.NONE);
        assertThat(waiting).isDone();
        assertThat(waiting.get().get(0).bytes()).isPositive();
        assertThat(waitingFetchReads()).as("read once, when that could complete it").isEqualTo(1);
    }

    @Test
    void aWaitingFetchWhoseLeaderEpochIsNowStaleIsAnsweredAtItsNextWakeUp() throws Exception {
        stop();
        start(Runnable::run);
        FetchRequestPartition epoch0 = new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, TP), 0, 1 << 20, Optional.of(0));
        var waiting = rm.fetch(-1, List.of(epoch0), 30_000, 1, 1 << 20);
        assertThat(waiting).isNotDone();
        controller.moveLeader(0); // still the leader, in epoch 1
        // the append is not committed, so the fetch has no record to read: only the stale epoch can answer it
        produce(30_000, "a");
        assertThat(waiting).isDone();
        assertThat(waiting.get().get(0).error()).isEqualTo(Errors.FENCED_LEADER_EPOCH);
    }

    @Test
    void aWaitingFollowerFetchIsAnsweredByTheAppendingThreadWithEveryPartitionOfTheRequest() throws Exception {
        stop();
        start(task -> { }); // nothing runs on the purgatory pool: only the appending thread can answer
        controller.setPartitionCount(2);
        TopicPartition tp1 = new TopicPartition("t", 1);
        var waiting = rm.fetch(1, List.of(
                new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, TP), 0, 1 << 20, Optional.of(0), 0),
                new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, tp1), 0, 1 << 20, Optional.of(0), 0)),
                30_000, 1, 1 << 20);
        assertThat(waiting).isNotDone();

        Map<TopicPartition, MemoryRecords> request = new java.util.LinkedHashMap<>();
        request.put(TP, records("a"));
        request.put(tp1, records("b", "c"));
        rm.appendAsync(request, (short) -1, 30_000);

        assertThat(waiting).as("answered before appendAsync returned").isDone();
        assertThat(waiting.get()).hasSize(2)
                .allSatisfy(r -> assertThat(r.bytes()).as("both partitions' records in the one answer").isPositive());
    }

    @Test
    void theFollowerFetchThatCommitsAnAcksAllAppendAnswersTheProduceOnItsThread() throws Exception {
        stop();
        start(task -> { }); // nothing runs on the purgatory pool
        CompletableFuture<ProduceResult> f = produce(30_000, "a", "b");
        followerFetch(1, 2);
        assertThat(f).isNotDone();
        followerFetch(2, 2);
        assertThat(f).as("answered before the committing fetch returned").isDone();
        assertThat(f.get().error()).isEqualTo(Errors.NONE);
    }

    @Test
    void waitingProduceTimesOut() throws Exception {
        assertThat(produce(50, "a").get().error()).isEqualTo(Errors.REQUEST_TIMED_OUT);
    }

    @Test
    void waitingProduceIsAnsweredWhenTheLeadershipMoves() throws Exception {
        CompletableFuture<ProduceResult> f = produce(30_000, "a");
        controller.moveLeader(1);
        assertThat(f.get().error()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(followerFetch(2, 0).error()).isIn(Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_LEADER_EPOCH);
    }

    @Test
    void divergingFollowerIsToldWhereItsEpochEnds() throws Exception {
        produce(30_000, "a", "b", "c");
        FetchRequestPartition r = new FetchRequestPartition(new TopicIdPartition(TOPIC_ID, TP), 5, 1 << 20, Optional.of(0), 0);
        FetchResult res = rm.fetch(1, List.of(r), 0, 1, 1 << 20).get().get(0);
        assertThat(res.divergingEpoch()).isNotNull();
        assertThat(res.divergingEpoch().epoch()).isZero();
        assertThat(res.divergingEpoch().endOffset()).isEqualTo(3);
        assertThat(res.bytes()).isZero();
    }

    /** Holds one topic; applies ISR changes by compare-and-set and publishes each change. */
    private static final class FakeController implements Controller {
        private final List<Consumer<ClusterImage>> listeners = new ArrayList<>();
        private volatile PartitionRegistration registration;
        private volatile Map<String, String> configs = Map.of("min.insync.replicas", "1");
        private volatile int partitionCount = 1;

        FakeController(PartitionRegistration registration) {
            this.registration = registration;
        }

        void setMinIsr(String n) {
            configs = Map.of("min.insync.replicas", n);
            publish();
        }

        /** The topic gets {@code n} partitions, all with the same replicas, leader and ISR. */
        void setPartitionCount(int n) {
            partitionCount = n;
            publish();
        }

        synchronized void moveLeader(int leader) {
            registration = registration.withLeader(leader, registration.isr());
            publish();
        }

        private synchronized void publish() {
            ClusterImage img = image();
            listeners.forEach(l -> l.accept(img));
        }

        @Override
        public ClusterImage image() {
            List<ClusterImage.BrokerInfo> brokers = List.of(new ClusterImage.BrokerInfo(0, "127.0.0.1", 1, null),
                    new ClusterImage.BrokerInfo(1, "127.0.0.1", 2, null), new ClusterImage.BrokerInfo(2, "127.0.0.1", 3, null));
            return new ClusterImage("c", 0, brokers, List.of(new TopicMetadata("t", TOPIC_ID,
                    java.util.Collections.nCopies(partitionCount, registration), configs)));
        }

        @Override
        public synchronized void addListener(Consumer<ClusterImage> listener) {
            listeners.add(listener);
        }

        @Override
        public synchronized PartitionRegistration alterPartition(TopicPartition partition, int leaderId, int leaderEpoch,
                                                                 int partitionEpoch, List<Integer> newIsr) {
            if (leaderEpoch != registration.leaderEpoch()) {
                throw new FencedLeaderEpochException("stale leader epoch " + leaderEpoch);
            }
            if (partitionEpoch != registration.partitionEpoch()) {
                throw new InvalidUpdateVersionException("stale partition epoch " + partitionEpoch);
            }
            registration = registration.withIsr(newIsr);
            publish();
            return registration;
        }

        @Override
        public TopicMetadata createTopic(String name, int partitions, short rf, Map<String, String> c, boolean v) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void alterPartitionReassignment(TopicPartition partition, List<Integer> targetReplicas) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void electLeader(org.apache.kafka.common.ElectionType type, TopicPartition partition) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void deleteTopic(Uuid topicId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public TopicMetadata createPartitions(String topic, int newCount, boolean validateOnly) {
            throw new UnsupportedOperationException();
        }

        @Override
        public TopicMetadata alterTopicConfigs(String topic, Map<String, String> c, boolean validateOnly) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long allocateProducerId() {
            return 0;
        }

        @Override
        public long registerBroker(ClusterImage.BrokerInfo broker) {
            return 0;
        }

        @Override
        public BrokerHeartbeat heartbeat(int brokerId, long brokerEpoch, boolean wantShutdown) {
            return new BrokerHeartbeat(false, true);
        }

        @Override
        public void close() {
        }
    }
}
