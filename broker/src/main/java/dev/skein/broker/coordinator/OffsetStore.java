package dev.skein.broker.coordinator;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Durable storage of coordinator state in the internal compacted topic {@code __consumer_offsets}
 * (the broker implements it over its log).
 */
public interface OffsetStore {
    /**
     * Appends records (value null = tombstone) for this group; completes when durable. All records of
     * one call go to the same {@code __consumer_offsets} partition (chosen by the store from groupId)
     * atomically. The future may complete on any thread.
     */
    CompletableFuture<Void> append(String groupId, List<CoordinatorRecord> records);

    /** Replays every stored record in log order (called once at start). */
    void load(Consumer<CoordinatorRecord> sink);
}
