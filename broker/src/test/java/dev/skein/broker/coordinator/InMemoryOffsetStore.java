package dev.skein.broker.coordinator;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * An {@link OffsetStore} in memory. Appends complete at once by default; {@link #holdAppends()} keeps
 * them pending until {@link #releaseAppends()}, and {@link #failNextAppend} fails the next one.
 */
final class InMemoryOffsetStore implements OffsetStore {
    private final List<CoordinatorRecord> log = new ArrayList<>();
    private final Deque<Runnable> held = new ArrayDeque<>();
    private boolean holding;
    private RuntimeException nextFailure;

    @Override
    public synchronized CompletableFuture<Void> append(String groupId, List<CoordinatorRecord> records) {
        if (nextFailure != null) {
            RuntimeException e = nextFailure;
            nextFailure = null;
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        Runnable complete = () -> {
            synchronized (this) {
                log.addAll(records);
            }
            f.complete(null);
        };
        if (holding) {
            held.add(complete);
        } else {
            complete.run();
        }
        return f;
    }

    @Override
    public synchronized void load(Consumer<CoordinatorRecord> sink) {
        new ArrayList<>(log).forEach(sink);
    }

    synchronized void holdAppends() {
        holding = true;
    }

    void releaseAppends() {
        List<Runnable> toRun;
        synchronized (this) {
            holding = false;
            toRun = new ArrayList<>(held);
            held.clear();
        }
        toRun.forEach(Runnable::run);
    }

    synchronized void failNextAppend(RuntimeException e) {
        nextFailure = e;
    }

    synchronized List<CoordinatorRecord> records() {
        return new ArrayList<>(log);
    }

    synchronized List<CoordinatorRecords.Decoded> decoded() {
        return log.stream().map(CoordinatorRecords::decode).toList();
    }
}
