package dev.skein.broker.server;

import dev.skein.broker.coordinator.CoordinatorRecord;
import dev.skein.broker.coordinator.OffsetStore;
import dev.skein.broker.metadata.Topics;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The group coordinator's durable state, kept in the compacted internal topic
 * {@code __consumer_offsets}: a group's records go to partition {@code abs(hash(groupId)) % N}, as in
 * Kafka, and are replayed from every partition at start-up.
 */
public final class LogOffsetStore implements OffsetStore {
    private static final int READ_CHUNK_BYTES = 1024 * 1024;
    /** Kafka's {@code offsets.commit.timeout.ms} default. */
    private static final long COMMIT_TIMEOUT_MS = 5_000;

    private final ReplicaManager replicaManager;
    private final int numPartitions;
    private final Time time;

    public LogOffsetStore(ReplicaManager replicaManager, int numPartitions, Time time) {
        this.replicaManager = replicaManager;
        this.numPartitions = numPartitions;
        this.time = time;
    }

    @Override
    public int partitionFor(String groupId) {
        return Utils.abs(groupId.hashCode()) % numPartitions;
    }

    @Override
    public CompletableFuture<Void> append(String groupId, List<CoordinatorRecord> records) {
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        long now = time.milliseconds();
        SimpleRecord[] simple = records.stream()
                .map(r -> new SimpleRecord(now, r.key(), r.value()))
                .toArray(SimpleRecord[]::new);
        TopicPartition tp = new TopicPartition(Topics.GROUP_METADATA_TOPIC, partitionFor(groupId));
        // like Kafka's offsets.commit.required.acks=-1: a commit is answered once the ISR has it, so a
        // committed offset survives the loss of the coordinator's broker
        return replicaManager.appendAsync(Map.of(tp, MemoryRecords.withRecords(Compression.NONE, simple)), (short) -1,
                        COMMIT_TIMEOUT_MS)
                .thenCompose(results -> {
                    ProduceResult result = results.get(tp);
                    if (result.error() != Errors.NONE) {
                        return CompletableFuture.failedFuture(result.error().exception(
                                "Could not store group state of " + groupId + ": " + result.errorMessage()));
                    }
                    return CompletableFuture.completedFuture(null);
                });
    }

    @Override
    public int partitions() {
        return numPartitions;
    }

    @Override
    public void load(Consumer<CoordinatorRecord> sink) {
        for (int p = 0; p < numPartitions; p++) {
            load(p, sink);
        }
    }

    @Override
    public void load(int partition, Consumer<CoordinatorRecord> sink) {
        TopicPartition tp = new TopicPartition(Topics.GROUP_METADATA_TOPIC, partition);
        PartitionLog log = replicaManager.partition(tp)
                .orElseThrow(() -> new CoordinatorNotAvailableException("Partition " + tp + " is not hosted here"))
                .log();
        try {
            long offset = log.logStartOffset();
            long end = log.logEndOffset();
            while (offset < end) {
                Records chunk = log.read(offset, READ_CHUNK_BYTES, end, true).records();
                long next = offset;
                for (RecordBatch batch : chunk.batches()) {
                    for (Record r : batch) {
                        if (r.offset() >= offset && r.hasKey()) {
                            sink.accept(new CoordinatorRecord(bytes(r.key()), r.hasValue() ? bytes(r.value()) : null));
                        }
                    }
                    next = batch.nextOffset();
                }
                if (next == offset) {
                    break;
                }
                offset = next;
            }
        } catch (IOException e) {
            throw new CoordinatorNotAvailableException("Could not load group state from " + tp + ": " + e.getMessage());
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
