package dev.skein.broker.server;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A fetch waiting for {@code minBytes} of data or its {@code maxWaitMs}: re-read when one of its
 * partitions gets new records, completed exactly once, with whatever is there at the deadline.
 * {@code readable} says, without reading, whether a read now could complete it: it is false only
 * when the read would find no byte and no error, and most wake-ups find nothing for this fetch
 * (an append below a consumer's high watermark, the check right after registering).
 */
final class DelayedFetch {
    private final List<TopicPartition> watched;
    private final int minBytes;
    private final BooleanSupplier readable;
    private final Supplier<List<FetchResult>> read;
    private final CompletableFuture<List<FetchResult>> future = new CompletableFuture<>();
    private final AtomicBoolean done = new AtomicBoolean();

    DelayedFetch(List<TopicPartition> watched, int minBytes, BooleanSupplier readable,
                 Supplier<List<FetchResult>> read) {
        this.watched = watched;
        this.minBytes = minBytes;
        this.readable = readable;
        this.read = read;
    }

    List<TopicPartition> watched() {
        return watched;
    }

    CompletableFuture<List<FetchResult>> future() {
        return future;
    }

    boolean isDone() {
        return done.get();
    }

    /** Re-reads if a read could complete it; completes if enough bytes (or an error) are there now. */
    boolean tryComplete() {
        if (done.get()) {
            return true;
        }
        if (!readable.getAsBoolean()) {
            return false;
        }
        List<FetchResult> result = read.get();
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

    private boolean complete(List<FetchResult> result) {
        if (done.compareAndSet(false, true)) {
            // each read builds a new list, and nothing else holds this one
            future.complete(result);
        }
        return true;
    }
}
