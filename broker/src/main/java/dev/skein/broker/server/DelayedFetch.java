package dev.skein.broker.server;

import org.apache.kafka.common.TopicPartition;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A fetch waiting for {@code minBytes} of data or its {@code maxWaitMs}: re-read when one of its
 * partitions gets new records, completed exactly once, with whatever is there at the deadline.
 */
final class DelayedFetch {
    private final List<TopicPartition> watched;
    private final int minBytes;
    private final Supplier<Map<FetchRequestPartition, FetchResult>> read;
    private final CompletableFuture<Map<FetchRequestPartition, FetchResult>> future = new CompletableFuture<>();
    private final AtomicBoolean done = new AtomicBoolean();

    DelayedFetch(List<TopicPartition> watched, int minBytes, Supplier<Map<FetchRequestPartition, FetchResult>> read) {
        this.watched = watched;
        this.minBytes = minBytes;
        this.read = read;
    }

    List<TopicPartition> watched() {
        return watched;
    }

    CompletableFuture<Map<FetchRequestPartition, FetchResult>> future() {
        return future;
    }

    boolean isDone() {
        return done.get();
    }

    /** Re-reads; completes if enough bytes (or an error) are there now. */
    boolean tryComplete() {
        if (done.get()) {
            return true;
        }
        Map<FetchRequestPartition, FetchResult> result = read.get();
        if (ReplicaManager.enough(result, minBytes)) {
            return complete(result);
        }
        return false;
    }

    /** The deadline passed: answer with what there is. */
    void expire() {
        if (!done.get()) {
            complete(read.get());
        }
    }

    private boolean complete(Map<FetchRequestPartition, FetchResult> result) {
        if (done.compareAndSet(false, true)) {
            future.complete(new LinkedHashMap<>(result));
        }
        return true;
    }
}
