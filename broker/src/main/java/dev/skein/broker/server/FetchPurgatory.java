package dev.skein.broker.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The fetches that wait for data (Kafka's fetch purgatory): each {@link DelayedFetch} is filed
 * under every partition it reads, woken when one of them changes, and answered when a read can
 * complete it or its wait runs out. What a fetch reads, and whether a read can complete it, is the
 * {@link ReplicaManager}'s; this class only keeps the waiting fetches and wakes them.
 */
final class FetchPurgatory {
    private static final Logger log = LoggerFactory.getLogger(FetchPurgatory.class);

    private final Map<TopicPartition, Set<DelayedFetch>> waiting = new ConcurrentHashMap<>();
    private final Expirations timer;
    private final Executor completionPool;
    private final Counter reads;

    FetchPurgatory(Expirations timer, Executor completionPool, MeterRegistry registry) {
        this.timer = timer;
        this.completionPool = completionPool;
        this.reads = Counter.builder("skein.fetch.waiting.reads")
                .description("Reads of waiting fetches: each wake-up of a fetch in purgatory that could complete it").register(registry);
    }

    /**
     * Files a fetch of {@code requested} that found less than {@code minBytes}: it is read again
     * (with {@code read}) whenever one of its partitions changes and {@code readable} says a read
     * could complete it, and answered with a last read after {@code maxWaitMs}.
     */
    CompletableFuture<List<FetchResult>> await(List<FetchRequestPartition> requested, int minBytes,
                                                                     long maxWaitMs, BooleanSupplier readable,
                                                                     Supplier<List<FetchResult>> read) {
        // a partition named twice is filed twice in the same set: no harm, and no set built per fetch
        List<TopicPartition> watched = new ArrayList<>(requested.size());
        for (FetchRequestPartition r : requested) {
            watched.add(r.partition().topicPartition());
        }
        DelayedFetch delayed = new DelayedFetch(watched, minBytes, readable, () -> {
            reads.increment();
            return read.get();
        });
        for (TopicPartition tp : watched) {
            waiting.computeIfAbsent(tp, k -> ConcurrentHashMap.newKeySet()).add(delayed);
        }
        // data may have arrived between the first read and filing it
        Expirations.Handle expiry = delayed.tryComplete() ? null : timer.schedule(delayed::expire, maxWaitMs);
        return delayed.future().whenComplete((r, e) -> {
            if (expiry != null) {
                expiry.cancel();
            }
            for (TopicPartition tp : watched) {
                Set<DelayedFetch> set = waiting.get(tp);
                if (set != null) {
                    set.remove(delayed);
                }
            }
        });
    }

    /** Wakes the fetches waiting on {@code tp}, each on the completion pool. */
    void wake(TopicPartition tp) {
        Set<DelayedFetch> set = waiting.get(tp);
        if (set == null || set.isEmpty()) {
            return;
        }
        for (DelayedFetch d : List.copyOf(set)) {
            completionPool.execute(d::tryComplete);
        }
    }

    /**
     * Re-reads, on the calling thread, the fetches waiting on any of {@code tps}, each once. For the
     * hot paths (a leader append, a watermark moved by a follower's fetch); the calling thread must
     * hold no partition lock.
     */
    void completeNow(List<TopicPartition> tps) {
        if (tps.isEmpty()) {
            return;
        }
        if (tps.size() == 1) {
            Set<DelayedFetch> set = waiting.get(tps.get(0));
            if (set != null && !set.isEmpty()) {
                for (DelayedFetch d : List.copyOf(set)) {
                    tryCompleteNow(d);
                }
            }
            return;
        }
        Set<DelayedFetch> all = new LinkedHashSet<>();
        for (TopicPartition tp : tps) {
            Set<DelayedFetch> set = waiting.get(tp);
            if (set != null) {
                all.addAll(set);
            }
        }
        for (DelayedFetch d : all) {
            tryCompleteNow(d);
        }
    }

    /** A failed re-read must not fail the produce or fetch whose thread runs it: the fetch still expires. */
    private static void tryCompleteNow(DelayedFetch d) {
        try {
            d.tryComplete();
        } catch (RuntimeException e) {
            log.warn("Re-reading a waiting fetch failed: {}", e.toString());
        }
    }

    /** Answers every waiting fetch now, with what there is (the broker is closing). */
    void expireAll() {
        for (Set<DelayedFetch> set : waiting.values()) {
            for (DelayedFetch d : set) {
                d.expire();
            }
        }
        waiting.clear();
    }
}
