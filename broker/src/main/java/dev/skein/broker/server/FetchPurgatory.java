package dev.skein.broker.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The fetches that wait for data (Kafka's fetch purgatory): each {@link DelayedFetch} is filed
 * under every partition it reads, woken when one of them changes, and answered when a read can
 * complete it or its wait runs out. What a fetch reads, and whether a read can complete it, is the
 * {@link ReplicaManager}'s; this class only keeps the waiting fetches and wakes them.
 *
 * <p>Each partition keeps one {@link WaitList} for as long as it exists: a follower files a fetch under
 * each of its partitions on every long poll.
 */
final class FetchPurgatory {
    private static final Logger log = LoggerFactory.getLogger(FetchPurgatory.class);

    private final Map<TopicPartition, WaitList<DelayedFetch>> waiting = new ConcurrentHashMap<>();
    private final Expirations timer;
    private final Executor completionPool;
    private final Counter reads;
    private final AtomicLong completeNowCalls = new AtomicLong();

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
        DelayedFetch delayed = new DelayedFetch(this, requested, minBytes, readable, read);
        // a partition named twice is filed twice: no harm, and no set built per fetch
        for (int i = 0, n = requested.size(); i < n; i++) {
            watchers(requested.get(i).partition().topicPartition()).add(delayed);
        }
        // data may have arrived between the first read and filing it
        if (!delayed.tryComplete()) {
            delayed.expiry(timer.schedule(delayed, maxWaitMs));
        }
        return delayed.future();
    }

    private WaitList<DelayedFetch> watchers(TopicPartition tp) {
        WaitList<DelayedFetch> w = waiting.get(tp);
        return w != null ? w : waiting.computeIfAbsent(tp, k -> new WaitList<>());
    }

    /** {@code delayed} completed: it leaves the lists of its partitions. */
    void remove(DelayedFetch delayed) {
        List<FetchRequestPartition> requested = delayed.requested();
        for (int i = 0, n = requested.size(); i < n; i++) {
            WaitList<DelayedFetch> w = waiting.get(requested.get(i).partition().topicPartition());
            if (w != null) {
                w.remove(delayed);
            }
        }
    }

    /**
     * The partition is gone: its list goes too, after {@link #wake} (a fetch filed meanwhile still
     * answers at its deadline, and a partition re-created under the name gets a new list).
     */
    void forget(TopicPartition tp) {
        waiting.remove(tp);
    }

    void countRead() {
        reads.increment();
    }

    /** Wakes the fetches waiting on {@code tp}, each on the completion pool. */
    void wake(TopicPartition tp) {
        WaitList<DelayedFetch> w = waiting.get(tp);
        if (w == null) {
            return;
        }
        for (DelayedFetch d : w.snapshot()) {
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
        // a fetch filed under several of these partitions (a follower's, above all) is tried once:
        // each call marks what it tried with its own number, instead of collecting a set
        long call = completeNowCalls.incrementAndGet();
        for (int i = 0, n = tps.size(); i < n; i++) {
            WaitList<DelayedFetch> w = waiting.get(tps.get(i));
            if (w == null) {
                continue;
            }
            for (DelayedFetch d : w.snapshot()) {
                if (d.triedBy != call) {
                    d.triedBy = call;
                    tryCompleteNow(d);
                }
            }
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

    /** Fetches waiting now, counted once per partition they wait on (for tests). */
    int filed() {
        int n = 0;
        for (WaitList<DelayedFetch> w : waiting.values()) {
            n += w.size();
        }
        return n;
    }

    /** Answers every waiting fetch now, with what there is (the broker is closing). */
    void expireAll() {
        for (WaitList<DelayedFetch> w : waiting.values()) {
            for (DelayedFetch d : w.snapshot()) {
                d.expire();
            }
        }
    }
}
