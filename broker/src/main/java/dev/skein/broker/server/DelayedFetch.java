package dev.skein.broker.server;

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
 * (an append below a consumer's high watermark, the check right after registering). On completion
 * it leaves the {@link FetchPurgatory} and cancels its deadline before its future completes.
 */
final class DelayedFetch implements Runnable {
    private final FetchPurgatory purgatory;
    private final List<FetchRequestPartition> requested;
    private final int minBytes;
    private final BooleanSupplier readable;
    private final Supplier<List<FetchResult>> read;
    private final CompletableFuture<List<FetchResult>> future = new CompletableFuture<>();
    private final AtomicBoolean done = new AtomicBoolean();
    private volatile Expirations.Handle expiry;
    /** The {@link FetchPurgatory#completeNow} call that last tried this fetch (so it tries it once per call). */
    long triedBy;

    DelayedFetch(FetchPurgatory purgatory, List<FetchRequestPartition> requested, int minBytes,
                 BooleanSupplier readable, Supplier<List<FetchResult>> read) {
        this.purgatory = purgatory;
        this.requested = requested;
        this.minBytes = minBytes;
        this.readable = readable;
        this.read = read;
    }

    /** The partitions it waits on, in request order (a partition named twice is there twice). */
    List<FetchRequestPartition> requested() {
        return requested;
    }

    CompletableFuture<List<FetchResult>> future() {
        return future;
    }

    boolean isDone() {
        return done.get();
    }

    /** Its deadline; cancelled on completion (at once, if it already completed). */
    void expiry(Expirations.Handle handle) {
        this.expiry = handle;
        if (done.get()) {
            handle.cancel();
        }
    }

    /** Re-reads if a read could complete it; completes if enough bytes (or an error) are there now. */
    boolean tryComplete() {
        if (done.get()) {
            return true;
        }
        if (!readable.getAsBoolean()) {
            return false;
        }
        List<FetchResult> result = reRead();
        if (ReplicaManager.enough(result, minBytes)) {
            return complete(result);
        }
        return false;
    }

    /** The deadline passed: answer with what there is. */
    void expire() {
        if (!done.get()) {
            complete(reRead());
        }
    }

    /** The deadline's task. */
    @Override
    public void run() {
        expire();
    }

    private List<FetchResult> reRead() {
        purgatory.countRead();
        return read.get();
    }

    private boolean complete(List<FetchResult> result) {
        if (done.compareAndSet(false, true)) {
            Expirations.Handle handle = expiry;
            if (handle != null) {
                handle.cancel();
            }
            purgatory.remove(this);
            // each read builds a new list, and nothing else holds this one
            future.complete(result);
        }
        return true;
    }
}
