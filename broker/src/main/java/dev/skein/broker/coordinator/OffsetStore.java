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

    /** Replays every stored record in log order. */
    void load(Consumer<CoordinatorRecord> sink);

    /** How many {@code __consumer_offsets} partitions the state is spread over. */
    default int partitions() {
        return 1;
    }

    /** The {@code __consumer_offsets} partition that holds {@code groupId}'s records. */
    default int partitionFor(String groupId) {
        return 0;
    }

    /**
     * Replays the records of one partition in log order (the coordinator takes a partition over
     * when this broker becomes its leader).
     */
    default void load(int partition, Consumer<CoordinatorRecord> sink) {
        if (partition == 0) {
            load(sink);
        }
    }
}
