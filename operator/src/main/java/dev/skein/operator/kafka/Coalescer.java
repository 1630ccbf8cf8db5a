package dev.skein.operator.kafka;

import org.apache.kafka.common.KafkaFuture;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Gathers single-key Admin calls that concurrent reconciles make within a short window into one
 * Admin call for all their keys: a thousand SkeinTopics reconciled at once send a few DescribeTopics
 * and CreateTopics requests, not a thousand of each. The first key of a batch starts the window
 * ({@code lingerMs}); a batch that reaches {@code maxBatch} keys goes at once. Each caller gets the
 * result of its own key, and a key asked twice in one batch is sent once.
 *
 * @param <K> what identifies one item (a topic name, a config resource)
 * @param <P> what the call needs of it (the same key, or e.g. a NewTopic)
 * @param <V> the result per key
 */
final class Coalescer<K, P, V> {
    private final String what;
    private final Function<Map<K, P>, Map<K, KafkaFuture<V>>> call;
    private final ScheduledExecutorService timer;
    private final long lingerMs;
    private final int maxBatch;
    private Map<K, Pending<P, V>> pending = new LinkedHashMap<>();

    private record Pending<P, V>(P payload, List<CompletableFuture<V>> waiters) {
    }

    Coalescer(String what, Function<Map<K, P>, Map<K, KafkaFuture<V>>> call, ScheduledExecutorService timer,
              long lingerMs, int maxBatch) {
        this.what = what;
        this.call = call;
        this.timer = timer;
        this.lingerMs = lingerMs;
        this.maxBatch = maxBatch;
    }

    CompletableFuture<V> submit(K key, P payload) {
        CompletableFuture<V> result = new CompletableFuture<>();
        boolean first;
        boolean full;
        synchronized (this) {
            first = pending.isEmpty();
            pending.computeIfAbsent(key, k -> new Pending<>(payload, new ArrayList<>())).waiters().add(result);
            full = pending.size() >= maxBatch;
        }
        if (full) {
            timer.execute(this::flush);
        } else if (first) {
            timer.schedule(this::flush, lingerMs, TimeUnit.MILLISECONDS);
        }
        return result;
    }

    /** Sends what is pending as one call (nothing if a full batch went already). */
    void flush() {
        Map<K, Pending<P, V>> batch;
        synchronized (this) {
            if (pending.isEmpty()) {
                return;
            }
            batch = pending;
            pending = new LinkedHashMap<>();
        }
        Map<K, P> payloads = new LinkedHashMap<>();
        batch.forEach((k, p) -> payloads.put(k, p.payload()));
        Map<K, KafkaFuture<V>> futures;
        try {
            futures = call.apply(payloads);
        } catch (RuntimeException e) {
            batch.values().forEach(p -> p.waiters().forEach(w -> w.completeExceptionally(e)));
            return;
        }
        batch.forEach((key, p) -> {
            KafkaFuture<V> future = futures.get(key);
            if (future == null) {
                IllegalStateException missing = new IllegalStateException(what + " gave no result for " + key);
                p.waiters().forEach(w -> w.completeExceptionally(missing));
                return;
            }
            future.whenComplete((value, error) -> p.waiters().forEach(w -> {
                if (error != null) {
                    w.completeExceptionally(error);
                } else {
                    w.complete(value);
                }
            }));
        });
    }
}
