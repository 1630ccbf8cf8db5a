package dev.skein.broker.server;

import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.replication.FetchTarget;
import dev.skein.broker.replication.FollowerLogs;
import dev.skein.broker.replication.LeaderState;
import dev.skein.broker.replication.ReplicaFetcherManager;
import dev.skein.broker.replication.ReplicationThrottles;
import dev.skein.broker.replication.Throttle;
import dev.skein.broker.replication.ReplicationConfig;
import dev.skein.broker.storage.EpochEndOffset;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.storage.LogAppendInfo;
import dev.skein.broker.storage.LogConfig;
import dev.skein.broker.storage.PartitionLog;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The partitions this broker hosts, kept in step with the cluster metadata, and the produce and
 * fetch paths over them: appends with acks semantics, reads bounded by the high watermark, and
 * long-polling fetches that complete when data arrives or their wait runs out (filed in the
 * {@link FetchPurgatory}).
 *
 * <p>Replication (after {@link #enableReplication}): as leader it answers follower fetches
 * (divergence check, follower offsets, high watermark), holds {@code acks=all} produces in
 * {@link DelayedProduce} until the high watermark covers them, and proposes ISR shrinks and
 * expansions to the controller, one in flight per partition; as follower it hands the partition to
 * the {@link ReplicaFetcherManager}, and it is the {@link FollowerLogs} the fetchers write through.
 */
public final class ReplicaManager implements AutoCloseable, FollowerLogs {
    private static final Logger log = LoggerFactory.getLogger(ReplicaManager.class);

    private final int brokerId;
    private final LogManager logManager;
    private final Map<String, String> brokerTopicDefaults;
    private final Time time;
    private final ScheduledExecutorService timer;
    private final MeterRegistry registry;
    /** Granularity of produce and fetch deadlines: a deadline runs up to this much late. */
    static final long EXPIRATION_TICK_MS = 10;
    private final Expirations expirations;
    private final FetchPurgatory purgatory;
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    private final Map<TopicPartition, WaitList<DelayedProduce>> waitingProduces = new ConcurrentHashMap<>();
    private final Map<String, Counter> bytesIn = new ConcurrentHashMap<>();
    private final Map<String, Counter> bytesOut = new ConcurrentHashMap<>();
    private final Map<String, Counter> messagesIn = new ConcurrentHashMap<>();
    private volatile Map<String, Integer> minIsrByTopic = Map.of();
    private final List<LeadershipListener> leadershipListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile ClusterImage image;
    private volatile ReplicationConfig replicationConfig = ReplicationConfig.defaults();
    private volatile ReplicationThrottles throttles;
    private volatile java.util.function.BooleanSupplier outOfTouch = () -> false;
    private Controller controller;
    private ReplicaFetcherManager fetchers;
    private ExecutorService alterPartitionExecutor;
    private Counter isrShrinks;
    private Counter isrExpands;
    private volatile boolean closed;

    public ReplicaManager(int brokerId, LogManager logManager, Map<String, String> brokerTopicDefaults, Time time,
                          ScheduledExecutorService timer, Executor fetchCompletionPool, MeterRegistry registry) {
        this.brokerId = brokerId;
        this.logManager = logManager;
        this.brokerTopicDefaults = Map.copyOf(brokerTopicDefaults);
        this.time = time;
        this.timer = timer;
        this.registry = registry;
        this.expirations = new Expirations(timer, time, EXPIRATION_TICK_MS);
        this.purgatory = new FetchPurgatory(expirations, fetchCompletionPool, registry);
    }

    /**
     * Turns on replication: ISR changes go to {@code controller}, followed partitions to
     * {@code fetchers}, and the ISR is checked for lagging followers every half
     * {@code replica.lag.time.max.ms}. Call before the first {@link #applyImage}.
     */
    public synchronized void enableReplication(Controller controller, ReplicaFetcherManager fetchers, ReplicationConfig config) {
        this.controller = controller;
        this.fetchers = fetchers;
        this.replicationConfig = config;
        this.alterPartitionExecutor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "skein-alter-partition-" + brokerId);
            t.setDaemon(true);
            return t;
        });
        this.isrShrinks = Counter.builder("kafka.server.replicamanager.isr.shrinks")
                .description("ISR shrinks proposed by this broker as leader and accepted").register(registry);
        this.isrExpands = Counter.builder("kafka.server.replicamanager.isr.expands")
                .description("ISR expansions proposed by this broker as leader and accepted").register(registry);
        Gauge.builder("kafka.server.replicamanager.under.replicated.partitions", this, ReplicaManager::underReplicatedPartitions)
                .description("Partitions led here whose ISR is smaller than their replica set").register(registry);
        long period = Math.max(1, config.replicaLagTimeMaxMs() / 2);
        timer.scheduleWithFixedDelay(this::maybeShrinkIsrs, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Turns on KIP-73 re-replication throttling with these buckets (their rates are set elsewhere,
     * from the dynamic broker configs). Call before the first {@link #applyImage}.
     */
    public void enableThrottling(ReplicationThrottles throttles) {
        this.throttles = throttles;
    }

    /**
     * While {@code outOfTouch} says so (the controller quorum has not answered this broker within
     * its session timeout), produce to a partition led here is refused with NOT_LEADER_OR_FOLLOWER
     * before anything is appended: the controller has fenced this broker and another replica leads,
     * so a write taken here could only be truncated later.
     */
    public void refuseWritesWhile(java.util.function.BooleanSupplier outOfTouch) {
        this.outOfTouch = outOfTouch;
    }

    public LogConfig logConfig(TopicMetadata topic) {
        return TopicConfigs.toLogConfig(brokerTopicDefaults, topic.configs());
    }

    public int minInsyncReplicas(TopicMetadata topic) {
        return TopicConfigs.minInsyncReplicas(brokerTopicDefaults, topic.configs());
    }

    /** Brings the hosted partitions in line with a new metadata image: opens new ones, drops deleted ones, applies configs. */
    /** Told, in image order, when this broker starts or stops leading a partition. */
    public interface LeadershipListener {
        /** {@code leader}: this broker now leads {@code tp} in {@code leaderEpoch}; otherwise it stopped leading it. */
        void onLeadershipChange(TopicPartition tp, boolean leader, int leaderEpoch);
    }

    /** Adds a listener; call before the first image is applied. Listeners must not block (they are called under the image lock). */
    public void addLeadershipListener(LeadershipListener listener) {
        leadershipListeners.add(listener);
    }

    private record LeadershipChange(TopicPartition tp, boolean leader, int leaderEpoch) {
    }

    private void fireLeadershipChanges(List<LeadershipChange> changes) {
        for (LeadershipChange c : changes) {
            for (LeadershipListener l : leadershipListeners) {
                try {
                    l.onLeadershipChange(c.tp(), c.leader(), c.leaderEpoch());
                } catch (RuntimeException e) {
                    log.warn("A leadership listener failed on {}: {}", c.tp(), e.toString());
                }
            }
        }
    }

    public synchronized void applyImage(ClusterImage next) {
        if (closed) {
            return;
        }
        Map<String, Integer> minIsr = new HashMap<>();
        for (TopicMetadata t : next.topics()) {
            minIsr.put(t.name(), minInsyncReplicas(t));
        }
        minIsrByTopic = Map.copyOf(minIsr);
        this.image = next;
        long now = time.milliseconds();
        Set<TopicPartition> wanted = new HashSet<>();
        List<FetchTarget> followed = new ArrayList<>();
        List<TopicPartition> changed = new ArrayList<>();
        // partitions whose leadership here began or ended
        List<LeadershipChange> leadership = new ArrayList<>();
        for (TopicMetadata t : next.topics()) {
            LogConfig config = logConfig(t);
            for (int p = 0; p < t.partitionCount(); p++) {
                PartitionRegistration registration = t.partition(p);
                if (!registration.isReplica(brokerId)) {
                    continue;
                }
                TopicPartition tp = new TopicPartition(t.name(), p);
                wanted.add(tp);
                Partition existing = partitions.get(tp);
                if (existing != null && existing.topicId().equals(t.id())) {
                    boolean ledBefore = existing.isLeader();
                    Partition.RoleChange change = existing.update(registration, brokerId, now);
                    if (change == Partition.RoleChange.BECAME_LEADER || ledBefore && !existing.isLeader()) {
                        leadership.add(new LeadershipChange(tp, existing.isLeader(), registration.leaderEpoch()));
                    }
                    if (change != Partition.RoleChange.NONE) {
                        log.info("Broker {} is now {} of {} in leader epoch {}", brokerId,
                                change == Partition.RoleChange.BECAME_LEADER ? "leader" : "a follower", tp,
                                registration.leaderEpoch());
                    }
                    if (!existing.log().config().equals(config)) {
                        existing.log().updateConfig(config);
                    }
                    existing.maybeAdvanceHighWatermark(minInsyncReplicas(t));
                    changed.add(tp);
                    addFetchTarget(followed, next, t, tp, registration);
                    continue;
                }
                if (existing != null) {
                    if (existing.isLeader()) {
                        leadership.add(new LeadershipChange(tp, false, registration.leaderEpoch()));
                    }
                    removePartition(tp);
                }
                try {
                    PartitionLog l = logManager.getOrCreate(tp, t.id(), config);
                    Partition created = new Partition(tp, t.id(), l, registration, brokerId, now,
                            logManager.checkpointedHighWatermark(tp));
                    partitions.put(tp, created);
                    if (created.isLeader()) {
                        leadership.add(new LeadershipChange(tp, true, registration.leaderEpoch()));
                    }
                    registerGauges(tp, registration);
                    addFetchTarget(followed, next, t, tp, registration);
                } catch (IOException e) {
                    log.error("Could not open the log of {}: {}", tp, e.toString());
                }
            }
        }
        for (TopicPartition tp : new ArrayList<>(partitions.keySet())) {
            if (!wanted.contains(tp)) {
                Partition gone = partitions.get(tp);
                if (gone != null && gone.isLeader()) {
                    leadership.add(new LeadershipChange(tp, false, gone.leaderEpoch()));
                }
                removePartition(tp);
            }
        }
        fireLeadershipChanges(leadership);
        if (fetchers != null) {
            fetchers.update(followed);
        }
        for (TopicPartition tp : changed) {
            onPartitionStateChange(tp);
        }
        for (TopicPartition tp : logManager.foundOnDisk()) {
            if (!wanted.contains(tp)) {
                try {
                    log.info("Deleting the log of {}: its topic no longer exists", tp);
                    logManager.delete(tp);
                } catch (IOException e) {
                    log.warn("Could not delete the log of {}: {}", tp, e.toString());
                }
            }
        }
    }

    /** A follower fetches from a live leader with a known endpoint; otherwise it waits for the next image. */
    private void addFetchTarget(List<FetchTarget> out, ClusterImage img, TopicMetadata t, TopicPartition tp,
                                PartitionRegistration r) {
        if (r.leader() == brokerId || !r.hasLeader() || !img.isLive(r.leader())) {
            return;
        }
        ClusterImage.BrokerInfo leader = img.broker(r.leader());
        // KIP-73: only a replica outside the ISR is throttled, and only if the topic lists it (or says *)
        boolean throttled = throttles != null && !r.isr().contains(brokerId) && TopicConfigs.throttledReplica(t.configs(),
                TopicConfigs.FOLLOWER_REPLICATION_THROTTLED_REPLICAS, tp.partition(), brokerId);
        out.add(new FetchTarget(tp, t.id(), r.leader(), leader.host(), leader.port(), r.leaderEpoch(), throttled));
    }

    private double underReplicatedPartitions() {
        int n = 0;
        for (Partition p : partitions.values()) {
            if (p.isLeader() && p.inSyncReplicaCount() < p.registration().replicas().size()) {
                n++;
            }
        }
        return n;
    }

    private void registerGauges(TopicPartition tp, PartitionRegistration registration) {
        for (int replica : registration.replicas()) {
            if (replica == brokerId) {
                continue;
            }
            Gauge.builder("kafka.server.replicamanager.follower.lag", this, rm -> {
                        Partition p = rm.partitions.get(tp);
                        return p == null ? 0 : p.withLeaderState(ls -> ls.lag(replica, p.log().logEndOffset())).orElse(0L);
                    })
                    .tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                    .tag("replica", Integer.toString(replica))
                    .description("Messages the follower is behind the leader's log end offset (on the leader)")
                    .register(registry);
        }
        Gauge.builder("kafka.log.size", this, rm -> {
                    Partition p = rm.partitions.get(tp);
                    return p == null ? 0 : p.log().size();
                })
                .tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                .baseUnit("bytes").description("Size of the partition's log on disk")
                .register(registry);
        Gauge.builder("kafka.log.log.end.offset", this, rm -> {
                    Partition p = rm.partitions.get(tp);
                    return p == null ? 0 : p.log().logEndOffset();
                })
                .tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                .register(registry);
    }

    private void removePartition(TopicPartition tp) {
        Partition p = partitions.remove(tp);
        if (p == null) {
            return;
        }
        registry.find("kafka.log.size").tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                .meters().forEach(registry::remove);
        registry.find("kafka.log.log.end.offset").tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                .meters().forEach(registry::remove);
        registry.find("kafka.server.replicamanager.follower.lag").tag("topic", tp.topic())
                .tag("partition", Integer.toString(tp.partition())).meters().forEach(registry::remove);
        try {
            logManager.delete(tp);
        } catch (IOException e) {
            log.warn("Could not delete the log of {}: {}", tp, e.toString());
        }
        // wake fetches and produces that wait on the deleted partition so they answer with the error now
        purgatory.wake(tp);
        purgatory.forget(tp);
        completeDelayedProduces(tp);
        waitingProduces.remove(tp);
    }

    public Optional<Partition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    public ClusterImage image() {
        return image;
    }

    // ---------------------------------------------------------------- produce

    /**
     * Appends each partition's records as leader. With {@code acks=all} a partition's answer waits
     * until the high watermark covers the append (or the ISR falls below min ISR, the leadership
     * moves, or {@code timeoutMs} passes); otherwise it is ready after the leader append.
     */
    public CompletableFuture<Map<TopicPartition, ProduceResult>> appendAsync(Map<TopicPartition, MemoryRecords> records,
                                                                             short acks, long timeoutMs) {
        DelayedProduce.Request answer = new DelayedProduce.Request(records.size());
        List<TopicPartition> grown = new ArrayList<>(records.size());
        int slot = 0;
        for (Map.Entry<TopicPartition, MemoryRecords> e : records.entrySet()) {
            TopicPartition tp = e.getKey();
            answer.partition(slot, tp);
            Appended a = appendOne(tp, e.getValue(), acks);
            if (a.grewLog()) {
                grown.add(tp);
            }
            if (acks != -1 || a.result().error() != Errors.NONE) {
                answer.set(slot++, a.result());
                continue;
            }
            DelayedProduce d = new DelayedProduce(tp, a.requiredOffset(), a.result(), answer, slot++, waitingProduces(tp));
            if (!d.tryComplete(partitions.get(tp), minIsr(tp))) {
                d.expiry(expirations.schedule(d, Math.max(0, timeoutMs)));
            }
        }
        // Fetches waiting on these partitions (the followers' long polls above all) are re-read here, on
        // this thread, once the whole request is appended: a follower gets every partition of the request
        // in one response, and its answer does not wait for another thread to be scheduled first.
        purgatory.completeNow(grown);
        return answer.sealed();
    }

    private WaitList<DelayedProduce> waitingProduces(TopicPartition tp) {
        WaitList<DelayedProduce> list = waitingProduces.get(tp);
        return list != null ? list : waitingProduces.computeIfAbsent(tp, k -> new WaitList<>());
    }

    /** @param grewLog the records were appended (not an error, not a retried duplicate) */
    private record Appended(ProduceResult result, long requiredOffset, boolean grewLog) {
        static Appended error(Errors error, String message) {
            return new Appended(ProduceResult.error(error, message), -1, false);
        }
    }

    private String notLeaderMessage(TopicPartition tp) {
        return "Broker " + brokerId + " is not the leader of " + tp;
    }

    /** The topic's min.insync.replicas, from the table built with the last image (parsing configs is too slow per request). */
    private int minIsr(TopicPartition tp) {
        return minIsrByTopic.getOrDefault(tp.topic(), 1);
    }

    private Appended appendOne(TopicPartition tp, MemoryRecords records, short acks) {
        Partition p = partitions.get(tp);
        if (p == null) {
            // in the metadata (the caller checked) but not hosted here (yet, or any more): as Kafka
            return Appended.error(Errors.NOT_LEADER_OR_FOLLOWER, "Broker " + brokerId + " does not host " + tp);
        }
        if (!p.isLeader()) {
            return Appended.error(Errors.NOT_LEADER_OR_FOLLOWER, notLeaderMessage(tp));
        }
        if (outOfTouch.getAsBoolean()) {
            return Appended.error(Errors.NOT_LEADER_OR_FOLLOWER, "Broker " + brokerId + " has not reached the controller"
                    + " quorum within its session timeout: it is presumed fenced, with another replica leading " + tp);
        }
        try {
            LogAppendInfo info = p.appendAsLeader(records, minIsr(tp), acks == -1);
            if (info == null) {
                return Appended.error(Errors.NOT_LEADER_OR_FOLLOWER, notLeaderMessage(tp));
            }
            if (!info.duplicate()) {
                counter(bytesIn, "kafka.server.brokertopicmetrics.bytes.in", tp.topic()).increment(records.sizeInBytes());
                counter(messagesIn, "kafka.server.brokertopicmetrics.messages.in", tp.topic()).increment(info.numRecords());
            }
            return new Appended(new ProduceResult(Errors.NONE, null, info.firstOffset(), info.logAppendTime(),
                    info.logStartOffset()), info.lastOffset() + 1, !info.duplicate());
        } catch (IOException e) {
            log.error("Append to {} failed: {}", tp, e.toString());
            return Appended.error(Errors.KAFKA_STORAGE_ERROR, "Disk error when appending to " + tp + ": " + e.getMessage());
        } catch (KafkaStorageException e) {
            return Appended.error(Errors.KAFKA_STORAGE_ERROR, e.getMessage());
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                log.error("Unexpected error appending to {}", tp, e);
            }
            return Appended.error(error, e.getMessage());
        }
    }

    /** Re-checks the produces waiting on {@code tp} (watermark, ISR or leadership changed). */
    private void completeDelayedProduces(TopicPartition tp) {
        WaitList<DelayedProduce> list = waitingProduces.get(tp);
        if (list == null || list.size() == 0) {
            return;
        }
        Partition p = partitions.get(tp);
        int minIsr = minIsr(tp);
        for (DelayedProduce d : list.snapshot()) {
            d.tryComplete(p, minIsr);
        }
    }

    /** The watermark, ISR or role of {@code tp} changed: wake whatever waits on it. */
    private void onPartitionStateChange(TopicPartition tp) {
        completeDelayedProduces(tp);
        purgatory.wake(tp);
    }

    // ---------------------------------------------------------------- ISR changes (leader)

    private void maybeShrinkIsrs() {
        try {
            long now = time.milliseconds();
            for (Partition p : partitions.values()) {
                if (!p.isLeader()) {
                    continue;
                }
                long leo = p.log().logEndOffset();
                p.withLeaderState(ls -> ls.shrinkProposal(leo, now, replicationConfig.replicaLagTimeMaxMs()).orElse(null))
                        .ifPresent(isr -> proposeIsr(p, isr, true));
            }
        } catch (RuntimeException e) {
            log.warn("ISR check failed: {}", e.toString());
        }
    }

    private void maybeExpandIsr(Partition p, int followerId) {
        List<Integer> isr = p.isrExpansionFor(followerId);
        if (isr != null) {
            proposeIsr(p, isr, false);
        }
    }

    /** Sends an ISR change to the controller, unless one is in flight; applies the answer. */
    private void proposeIsr(Partition p, List<Integer> newIsr, boolean shrink) {
        if (controller == null) {
            return;
        }
        TopicPartition tp = p.topicPartition();
        int[] epochs = p.withLeaderState(ls -> {
            if (ls.hasPendingIsrChange()) {
                return null;
            }
            ls.markPending(newIsr);
            return new int[]{ls.leaderEpoch(), ls.partitionEpoch()};
        }).orElse(null);
        if (epochs == null) {
            return;
        }
        log.info("Broker {} proposes ISR {} for {} ({}; leader epoch {}, partition epoch {})", brokerId, newIsr, tp,
                shrink ? "shrink" : "expand", epochs[0], epochs[1]);
        alterPartitionExecutor.execute(() -> {
            try {
                PartitionRegistration r = controller.alterPartition(tp, brokerId, epochs[0], epochs[1], newIsr);
                p.applyLeaderRegistration(r, time.milliseconds());
                (shrink ? isrShrinks : isrExpands).increment();
                p.maybeAdvanceHighWatermark(minIsr(tp));
                onPartitionStateChange(tp);
            } catch (InvalidUpdateVersionException e) {
                // a newer registration is on its way in an image; it clears the change in flight
                log.info("ISR change of {} lost a race ({}); waiting for the next image", tp, e.getMessage());
            } catch (ApiException e) {
                log.info("ISR change of {} refused: {}", tp, e.toString());
                abandonAfterBackoff(p);
            } catch (RuntimeException e) {
                log.warn("ISR change of {} failed: {}", tp, e.toString());
                abandonAfterBackoff(p);
            }
        });
    }

    /** A refused change stays "in flight" for one fetch back-off, so a refused expansion is not re-sent on every fetch. */
    private void abandonAfterBackoff(Partition p) {
        timer.schedule(() -> p.withLeaderState(ls -> {
            ls.abandonPendingIsrChange();
            return null;
        }), replicationConfig.fetchBackoffMs(), TimeUnit.MILLISECONDS);
    }

    // ---------------------------------------------------------------- follower side (FollowerLogs)

    @Override
    public Position position(TopicPartition tp) {
        Partition p = partitions.get(tp);
        return p == null || p.isLeader() ? null : p.fetchPosition();
    }

    @Override
    public EpochEndOffset endOffsetForEpoch(TopicPartition tp, int epoch) {
        Partition p = partitions.get(tp);
        return p == null ? EpochEndOffset.UNDEFINED : p.log().endOffsetForEpoch(epoch);
    }

    @Override
    public boolean append(TopicPartition tp, int leaderEpoch, MemoryRecords records, long leaderHighWatermark) throws IOException {
        Partition p = partitions.get(tp);
        long hwBefore = p == null ? -1 : p.highWatermark();
        boolean ok = p != null && p.appendAsFollower(leaderEpoch, records, leaderHighWatermark);
        if (ok && p.highWatermark() != hwBefore) {
            purgatory.wake(tp);
        }
        return ok;
    }

    @Override
    public boolean truncate(TopicPartition tp, int leaderEpoch, long offset) throws IOException {
        Partition p = partitions.get(tp);
        return p != null && p.truncateAsFollower(leaderEpoch, offset);
    }

    @Override
    public boolean truncateFullyAndStartAt(TopicPartition tp, int leaderEpoch, long offset) throws IOException {
        Partition p = partitions.get(tp);
        return p != null && p.truncateFullyAsFollower(leaderEpoch, offset);
    }

    private Counter counter(Map<String, Counter> cache, String name, String topic) {
        return cache.computeIfAbsent(topic, t -> Counter.builder(name).tag("topic", t).register(registry));
    }

    // ---------------------------------------------------------------- fetch

    /**
     * Reads the partitions; if fewer than {@code minBytes} are there and {@code maxWaitMs} > 0, waits
     * until enough arrive or the wait runs out. {@code maxBytes} bounds the whole response, but the
     * first batch found is always returned whole so a consumer can make progress. The results are in
     * the order of {@code requested}, one per partition (a list, not a map: a follower's fetch reads
     * every partition of its session on every round trip, most of them idle, and a map per read
     * was the largest allocation of the leader's side of replication).
     */
    public CompletableFuture<List<FetchResult>> fetch(List<FetchRequestPartition> requested,
                                                                           long maxWaitMs, int minBytes, int maxBytes) {
        return fetch(-1, requested, maxWaitMs, minBytes, maxBytes);
    }

    /**
     * As {@link #fetch(List, long, int, int)}, for a consumer ({@code replicaId} &lt; 0) or for the
     * follower {@code replicaId}: a follower reads up to the log end offset, its fetch offset is
     * recorded as its log end offset, and a diverging log is answered with the epoch to truncate to.
     */
    public CompletableFuture<List<FetchResult>> fetch(int replicaId, List<FetchRequestPartition> requested,
                                                     long maxWaitMs, int minBytes, int maxBytes) {
        List<FetchResult> now = readAll(replicaId, requested, maxBytes, true);
        if (replicaId >= 0 && maxWaitMs > 0) {
            // a follower held back by the leader throttle asks again once the bucket refills, not after its whole wait
            maxWaitMs = Math.min(maxWaitMs, leaderThrottleWaitMs(replicaId, requested));
        }
        if (maxWaitMs <= 0 || requested.isEmpty() || enough(now, minBytes)) {
            countBytesOut(requested, now);
            return CompletableFuture.completedFuture(now);
        }
        // A re-read only reads: recording the follower's fetch offset again could run after the follower
        // already fetched further (the answer to this fetch went out on another thread) and move its log
        // end offset back, holding the high watermark, and every acks=all produce, until its next fetch
        // expired (replica.fetch.wait.max.ms). Kafka records a follower's fetch once, on arrival, too.
        return purgatory.await(requested, minBytes, maxWaitMs, () -> readable(replicaId, requested, minBytes),
                () -> readAll(replicaId, requested, maxBytes, false)).whenComplete((r, e) -> {
                    if (r != null) {
                        countBytesOut(requested, r);
                    }
                });
    }

    static boolean enough(List<FetchResult> result, int minBytes) {
        long bytes = 0;
        for (int i = 0, n = result.size(); i < n; i++) {
            FetchResult r = result.get(i);
            if (r.error() != Errors.NONE || r.divergingEpoch() != null) {
                return true;
            }
            bytes += r.bytes();
        }
        return bytes >= minBytes;
    }

    private void countBytesOut(List<FetchRequestPartition> requested, List<FetchResult> result) {
        for (int i = 0, n = result.size(); i < n; i++) {
            int bytes = result.get(i).bytes();
            if (bytes > 0) {
                counter(bytesOut, "kafka.server.brokertopicmetrics.bytes.out", requested.get(i).partition().topic()).increment(bytes);
            }
        }
    }

    /**
     * Whether a read of {@code requested} now could be enough for a fetch of {@code minBytes}: some
     * partition has records past its fetch offset that this reader may see (a follower up to the log
     * end, a consumer up to the high watermark), or would be answered with an error. Reads no
     * record and allocates nothing; false only when {@link #readAll} would find no byte and no error
     * (both ask {@link #refusal}, and the offsets are checked as {@link #read} checks them), so a
     * waiting fetch is read only when that can complete it. Kafka's DelayedFetch likewise compares
     * offsets before it reads.
     */
    private boolean readable(int replicaId, List<FetchRequestPartition> requested, int minBytes) {
        if (minBytes <= 0) {
            return true;
        }
        for (FetchRequestPartition r : requested) {
            Partition p = partitions.get(r.partition().topicPartition());
            if (refusal(p, r) != null) {
                return true;
            }
            PartitionLog l = p.log();
            long end = l.logEndOffset();
            long offset = r.fetchOffset();
            if (offset < l.logStartOffset() || offset > end) {
                return true;
            }
            long limit = replicaId >= 0 ? end : Math.min(p.highWatermark(), end);
            if (offset < limit) {
                Throttle throttle = replicaId >= 0 ? leaderThrottleFor(p, replicaId) : null;
                if (throttle == null || throttle.available() > 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Reads the partitions; with {@code recordFollowerFetch}, a follower's fetch offsets are recorded first. */
    private List<FetchResult> readAll(int replicaId, List<FetchRequestPartition> requested, int maxBytes,
                                      boolean recordFollowerFetch) {
        FetchResult[] out = new FetchResult[requested.size()];
        int remaining = maxBytes;
        boolean minOneMessage = true;
        for (int i = 0; i < out.length; i++) {
            FetchRequestPartition r = requested.get(i);
            FetchResult result = readOne(replicaId, r, Math.min(remaining, r.maxBytes()), minOneMessage, recordFollowerFetch);
            out[i] = result;
            if (result.bytes() > 0) {
                minOneMessage = false;
                remaining = Math.max(0, remaining - result.bytes());
            }
        }
        return Arrays.asList(out);
    }

    private FetchResult readOne(int replicaId, FetchRequestPartition r, int maxBytes, boolean minOneMessage,
                                boolean recordFollowerFetch) {
        Partition p = partitions.get(r.partition().topicPartition());
        Errors refused = refusal(p, r);
        if (refused != null) {
            return FetchResult.error(refused);
        }
        PartitionLog l = p.log();
        long readLimit;
        if (replicaId >= 0) {
            TopicPartition tp = r.partition().topicPartition();
            if (recordFollowerFetch) {
                Partition.FollowerFetchOutcome outcome = p.recordFollowerFetch(replicaId, r.fetchOffset(),
                        r.lastFetchedEpoch(), minIsr(tp), time.milliseconds());
                if (outcome == null) {
                    return FetchResult.error(Errors.NOT_LEADER_OR_FOLLOWER);
                }
                if (outcome.diverging() != null) {
                    return new FetchResult(Errors.NONE, p.highWatermark(), l.logStartOffset(), MemoryRecords.EMPTY,
                            outcome.diverging());
                }
                if (outcome.highWatermarkAdvanced()) {
                    // on this thread: the acks=all produces this fetch commits are answered without
                    // waiting for another thread to be scheduled, and so are consumers waiting for the watermark
                    completeDelayedProduces(tp);
                    purgatory.completeNow(List.of(tp));
                }
                maybeExpandIsr(p, replicaId);
            }
            readLimit = Long.MAX_VALUE;
            Throttle throttle = leaderThrottleFor(p, replicaId);
            if (throttle != null) {
                long available = throttle.available();
                if (available <= 0) {
                    return new FetchResult(Errors.NONE, p.highWatermark(), l.logStartOffset(), MemoryRecords.EMPTY);
                }
                FetchResult result = read(p, r, (int) Math.min(maxBytes, available), readLimit, minOneMessage);
                throttle.record(result.bytes());
                return result;
            }
        } else {
            readLimit = p.highWatermark();
        }
        return read(p, r, maxBytes, readLimit, minOneMessage);
    }

    /**
     * The error a fetch of {@code r} is answered with before anything is read from {@code p} (the
     * partition hosted under its name, or null), or null if it may read.
     */
    private static Errors refusal(Partition p, FetchRequestPartition r) {
        if (p == null) {
            // The caller checked the partition against the metadata: it exists but is not (yet, or any
            // more) hosted here, so, as Kafka, the client is sent to refresh its metadata and retry.
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        if (!p.topicId().equals(r.partition().topicId()) && !r.partition().topicId().equals(org.apache.kafka.common.Uuid.ZERO_UUID)) {
            return Errors.UNKNOWN_TOPIC_ID;
        }
        if (!p.isLeader()) {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        Optional<Integer> epoch = r.currentLeaderEpoch();
        if (epoch.isPresent() && epoch.get() >= 0) {
            if (epoch.get() < p.leaderEpoch()) {
                return Errors.FENCED_LEADER_EPOCH;
            } else if (epoch.get() > p.leaderEpoch()) {
                return Errors.UNKNOWN_LEADER_EPOCH;
            }
        }
        return null;
    }

    /** How long a fetch of follower {@code replicaId} may wait before the leader throttle lets its bytes through. */
    private long leaderThrottleWaitMs(int replicaId, List<FetchRequestPartition> requested) {
        ReplicationThrottles t = throttles;
        if (t == null || !t.leader().enabled()) {
            return Long.MAX_VALUE;
        }
        long wait = t.leader().msUntilAvailable();
        if (wait <= 0) {
            return Long.MAX_VALUE;
        }
        for (FetchRequestPartition r : requested) {
            Partition p = partitions.get(r.partition().topicPartition());
            if (p != null && p.isLeader() && leaderThrottleFor(p, replicaId) != null) {
                return Math.max(1, wait);
            }
        }
        return Long.MAX_VALUE;
    }

    /**
     * The leader throttle if the fetch of follower {@code replicaId} counts against it: throttling is
     * on, the topic lists this leader's replica in {@code leader.replication.throttled.replicas} (or
     * says *), and the follower is outside the ISR. Otherwise null.
     */
    private Throttle leaderThrottleFor(Partition p, int replicaId) {
        ReplicationThrottles t = throttles;
        ClusterImage img = image;
        if (t == null || !t.leader().enabled() || img == null) {
            return null;
        }
        TopicMetadata topic = img.topic(p.topicPartition().topic());
        if (topic == null || !TopicConfigs.throttledReplica(topic.configs(), TopicConfigs.LEADER_REPLICATION_THROTTLED_REPLICAS,
                p.topicPartition().partition(), brokerId)) {
            return null;
        }
        boolean inSync = p.withLeaderState(ls -> ls.isr().contains(replicaId)).orElse(true);
        return inSync ? null : t.leader();
    }

    private FetchResult read(Partition p, FetchRequestPartition r, int maxBytes, long readLimit, boolean minOneMessage) {
        PartitionLog l = p.log();
        long hw = p.highWatermark();
        try {
            long end = l.logEndOffset();
            if (r.fetchOffset() < l.logStartOffset() || r.fetchOffset() > end) {
                return new FetchResult(Errors.OFFSET_OUT_OF_RANGE, hw, l.logStartOffset(), MemoryRecords.EMPTY);
            }
            if (r.fetchOffset() >= Math.min(readLimit, end)) {
                return p.emptyRead(hw, l.logStartOffset()); // nothing to read: the usual answer for an idle partition
            }
            Records records = maxBytes <= 0 && !minOneMessage
                    ? MemoryRecords.EMPTY
                    : l.read(r.fetchOffset(), Math.max(0, maxBytes), readLimit, minOneMessage).records();
            return new FetchResult(Errors.NONE, hw, l.logStartOffset(), records);
        } catch (org.apache.kafka.common.errors.OffsetOutOfRangeException e) {
            return new FetchResult(Errors.OFFSET_OUT_OF_RANGE, hw, l.logStartOffset(), MemoryRecords.EMPTY);
        } catch (IOException e) {
            log.error("Read of {} failed: {}", r.partition(), e.toString());
            return FetchResult.error(Errors.KAFKA_STORAGE_ERROR);
        }
    }

    // ---------------------------------------------------------------- records deletion

    /** DeleteRecords: offset -1 means the high watermark; returns the new low watermark. */
    public long deleteRecords(TopicPartition tp, long offset) throws IOException {
        Partition p = partitions.get(tp);
        if (p == null) {
            throw new org.apache.kafka.common.errors.UnknownTopicOrPartitionException("Unknown partition " + tp);
        }
        long target = offset == -1 ? p.highWatermark() : offset;
        if (target < 0 || target > p.highWatermark()) {
            throw new org.apache.kafka.common.errors.OffsetOutOfRangeException("Cannot delete records of " + tp
                    + " before " + target + ": the high watermark is " + p.highWatermark());
        }
        long low = p.log().deleteRecordsBefore(target);
        p.clampHighWatermark();
        return low;
    }

    /** Writes the high watermark of every hosted partition to its log dir's checkpoint (not after close, which writes the last). */
    public void checkpointHighWatermarks() {
        if (!closed) {
            writeHighWatermarks();
        }
    }

    private void writeHighWatermarks() {
        Map<TopicPartition, Long> hws = new HashMap<>();
        partitions.forEach((tp, p) -> hws.put(tp, p.highWatermark()));
        logManager.checkpointHighWatermarks(hws);
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            writeHighWatermarks();
        }
        purgatory.expireAll();
        for (WaitList<DelayedProduce> list : waitingProduces.values()) {
            for (DelayedProduce d : list.snapshot()) {
                d.tryComplete(null, 1);
            }
        }
        waitingProduces.clear();
        if (alterPartitionExecutor != null) {
            alterPartitionExecutor.shutdownNow();
        }
        partitions.clear();
    }
}
