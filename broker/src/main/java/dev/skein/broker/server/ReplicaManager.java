package dev.skein.broker.server;

import dev.skein.broker.config.TopicConfigs;
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
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The partitions this broker hosts, kept in step with the cluster metadata, and the produce and
 * fetch paths over them: appends with acks semantics, reads bounded by the high watermark, and
 * long-polling fetches that complete when data arrives or their wait runs out.
 */
public final class ReplicaManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaManager.class);

    private final int brokerId;
    private final LogManager logManager;
    private final Map<String, String> brokerTopicDefaults;
    private final Time time;
    private final ScheduledExecutorService timer;
    private final Executor fetchCompletionPool;
    private final MeterRegistry registry;
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Set<DelayedFetch>> waiting = new ConcurrentHashMap<>();
    private final Map<String, Counter> bytesIn = new ConcurrentHashMap<>();
    private final Map<String, Counter> bytesOut = new ConcurrentHashMap<>();
    private final Map<String, Counter> messagesIn = new ConcurrentHashMap<>();
    private volatile ClusterImage image;

    public ReplicaManager(int brokerId, LogManager logManager, Map<String, String> brokerTopicDefaults, Time time,
                          ScheduledExecutorService timer, Executor fetchCompletionPool, MeterRegistry registry) {
        this.brokerId = brokerId;
        this.logManager = logManager;
        this.brokerTopicDefaults = Map.copyOf(brokerTopicDefaults);
        this.time = time;
        this.timer = timer;
        this.fetchCompletionPool = fetchCompletionPool;
        this.registry = registry;
    }

    public LogConfig logConfig(TopicMetadata topic) {
        return TopicConfigs.toLogConfig(brokerTopicDefaults, topic.configs());
    }

    public int minInsyncReplicas(TopicMetadata topic) {
        return TopicConfigs.minInsyncReplicas(brokerTopicDefaults, topic.configs());
    }

    /** Brings the hosted partitions in line with a new metadata image: opens new ones, drops deleted ones, applies configs. */
    public synchronized void applyImage(ClusterImage next) {
        this.image = next;
        Set<TopicPartition> wanted = new HashSet<>();
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
                    existing.update(registration, brokerId);
                    if (!existing.log().config().equals(config)) {
                        existing.log().updateConfig(config);
                    }
                    continue;
                }
                if (existing != null) {
                    removePartition(tp);
                }
                try {
                    PartitionLog l = logManager.getOrCreate(tp, t.id(), config);
                    partitions.put(tp, new Partition(tp, t.id(), l, registration, brokerId));
                    registerGauges(tp);
                } catch (IOException e) {
                    log.error("Could not open the log of {}: {}", tp, e.toString());
                }
            }
        }
        for (TopicPartition tp : new ArrayList<>(partitions.keySet())) {
            if (!wanted.contains(tp)) {
                removePartition(tp);
            }
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

    private void registerGauges(TopicPartition tp) {
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
        try {
            logManager.delete(tp);
        } catch (IOException e) {
            log.warn("Could not delete the log of {}: {}", tp, e.toString());
        }
        // wake fetches that wait on the deleted partition so they answer with the error now
        notifyWaiting(tp);
    }

    public Optional<Partition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    public ClusterImage image() {
        return image;
    }

    // ---------------------------------------------------------------- produce

    /**
     * Appends each partition's records as leader. With {@code acks=all} the ISR must hold
     * {@code min.insync.replicas}; on one broker the ISR is this broker, so an append is fully
     * replicated when it returns.
     */
    public Map<TopicPartition, ProduceResult> append(Map<TopicPartition, MemoryRecords> records, short acks) {
        Map<TopicPartition, ProduceResult> results = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, MemoryRecords> e : records.entrySet()) {
            results.put(e.getKey(), appendOne(e.getKey(), e.getValue(), acks));
        }
        return results;
    }

    private ProduceResult appendOne(TopicPartition tp, MemoryRecords records, short acks) {
        Partition p = partitions.get(tp);
        if (p == null) {
            return ProduceResult.error(Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
        }
        if (!p.isLeader()) {
            return ProduceResult.error(Errors.NOT_LEADER_OR_FOLLOWER, "Broker " + brokerId + " is not the leader of " + tp);
        }
        if (acks == -1) {
            TopicMetadata topic = image.topic(tp.topic());
            int minIsr = topic == null ? 1 : minInsyncReplicas(topic);
            if (p.inSyncReplicaCount() < minIsr) {
                return ProduceResult.error(Errors.NOT_ENOUGH_REPLICAS, "The size of the current ISR "
                        + p.inSyncReplicaCount() + " is insufficient to satisfy the min.isr requirement of "
                        + minIsr + " for partition " + tp);
            }
        }
        try {
            LogAppendInfo info = p.log().appendAsLeader(records, p.leaderEpoch());
            p.advanceHighWatermark();
            if (!info.duplicate()) {
                counter(bytesIn, "kafka.server.brokertopicmetrics.bytes.in", tp.topic()).increment(records.sizeInBytes());
                counter(messagesIn, "kafka.server.brokertopicmetrics.messages.in", tp.topic()).increment(info.numRecords());
                notifyWaiting(tp);
            }
            return new ProduceResult(Errors.NONE, null, info.firstOffset(), info.logAppendTime(), info.logStartOffset());
        } catch (IOException e) {
            log.error("Append to {} failed: {}", tp, e.toString());
            return ProduceResult.error(Errors.KAFKA_STORAGE_ERROR, "Disk error when appending to " + tp + ": " + e.getMessage());
        } catch (KafkaStorageException e) {
            return ProduceResult.error(Errors.KAFKA_STORAGE_ERROR, e.getMessage());
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                log.error("Unexpected error appending to {}", tp, e);
            }
            return ProduceResult.error(error, e.getMessage());
        }
    }

    private Counter counter(Map<String, Counter> cache, String name, String topic) {
        return cache.computeIfAbsent(topic, t -> Counter.builder(name).tag("topic", t).register(registry));
    }

    // ---------------------------------------------------------------- fetch

    /**
     * Reads the partitions; if fewer than {@code minBytes} are there and {@code maxWaitMs} > 0, waits
     * until enough arrive or the wait runs out. {@code maxBytes} bounds the whole response, but the
     * first batch found is always returned whole so a consumer can make progress.
     */
    public CompletableFuture<Map<FetchRequestPartition, FetchResult>> fetch(List<FetchRequestPartition> requested,
                                                                           long maxWaitMs, int minBytes, int maxBytes) {
        Map<FetchRequestPartition, FetchResult> now = readAll(requested, maxBytes);
        if (maxWaitMs <= 0 || requested.isEmpty() || enough(now, minBytes)) {
            countBytesOut(now);
            return CompletableFuture.completedFuture(now);
        }
        List<TopicPartition> watched = requested.stream().map(r -> r.partition().topicPartition()).distinct().toList();
        DelayedFetch delayed = new DelayedFetch(watched, minBytes, () -> readAll(requested, maxBytes));
        for (TopicPartition tp : watched) {
            waiting.computeIfAbsent(tp, k -> ConcurrentHashMap.newKeySet()).add(delayed);
        }
        // data may have arrived between the first read and registering
        if (!delayed.tryComplete()) {
            timer.schedule(delayed::expire, maxWaitMs, TimeUnit.MILLISECONDS);
        }
        return delayed.future().whenComplete((r, e) -> {
            for (TopicPartition tp : watched) {
                Set<DelayedFetch> set = waiting.get(tp);
                if (set != null) {
                    set.remove(delayed);
                }
            }
            if (r != null) {
                countBytesOut(r);
            }
        });
    }

    static boolean enough(Map<FetchRequestPartition, FetchResult> result, int minBytes) {
        long bytes = 0;
        for (FetchResult r : result.values()) {
            if (r.error() != Errors.NONE) {
                return true;
            }
            bytes += r.bytes();
        }
        return bytes >= minBytes;
    }

    private void notifyWaiting(TopicPartition tp) {
        Set<DelayedFetch> set = waiting.get(tp);
        if (set == null || set.isEmpty()) {
            return;
        }
        for (DelayedFetch d : List.copyOf(set)) {
            fetchCompletionPool.execute(d::tryComplete);
        }
    }

    private void countBytesOut(Map<FetchRequestPartition, FetchResult> result) {
        result.forEach((req, r) -> {
            if (r.bytes() > 0) {
                counter(bytesOut, "kafka.server.brokertopicmetrics.bytes.out", req.partition().topic()).increment(r.bytes());
            }
        });
    }

    private Map<FetchRequestPartition, FetchResult> readAll(List<FetchRequestPartition> requested, int maxBytes) {
        Map<FetchRequestPartition, FetchResult> out = new LinkedHashMap<>();
        int remaining = maxBytes;
        boolean minOneMessage = true;
        for (FetchRequestPartition r : requested) {
            FetchResult result = readOne(r, Math.min(remaining, r.maxBytes()), minOneMessage);
            out.put(r, result);
            if (result.bytes() > 0) {
                minOneMessage = false;
                remaining = Math.max(0, remaining - result.bytes());
            }
        }
        return out;
    }

    private FetchResult readOne(FetchRequestPartition r, int maxBytes, boolean minOneMessage) {
        Partition p = partitions.get(r.partition().topicPartition());
        if (p == null || !p.topicId().equals(r.partition().topicId()) && !r.partition().topicId().equals(org.apache.kafka.common.Uuid.ZERO_UUID)) {
            return FetchResult.error(r.partition().topicId().equals(org.apache.kafka.common.Uuid.ZERO_UUID)
                    ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.UNKNOWN_TOPIC_ID);
        }
        if (!p.isLeader()) {
            return FetchResult.error(Errors.NOT_LEADER_OR_FOLLOWER);
        }
        Optional<Integer> epoch = r.currentLeaderEpoch();
        if (epoch.isPresent() && epoch.get() >= 0) {
            if (epoch.get() < p.leaderEpoch()) {
                return FetchResult.error(Errors.FENCED_LEADER_EPOCH);
            } else if (epoch.get() > p.leaderEpoch()) {
                return FetchResult.error(Errors.UNKNOWN_LEADER_EPOCH);
            }
        }
        long hw = p.highWatermark();
        PartitionLog l = p.log();
        try {
            if (r.fetchOffset() < l.logStartOffset() || r.fetchOffset() > l.logEndOffset()) {
                return new FetchResult(Errors.OFFSET_OUT_OF_RANGE, hw, l.logStartOffset(), MemoryRecords.EMPTY);
            }
            Records records = maxBytes <= 0 && !minOneMessage
                    ? MemoryRecords.EMPTY
                    : l.read(r.fetchOffset(), Math.max(0, maxBytes), hw, minOneMessage).records();
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

    @Override
    public void close() {
        for (Set<DelayedFetch> set : waiting.values()) {
            for (DelayedFetch d : set) {
                d.expire();
            }
        }
        waiting.clear();
        partitions.clear();
    }
}
