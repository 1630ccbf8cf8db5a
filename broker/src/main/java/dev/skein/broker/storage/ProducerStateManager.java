package dev.skein.broker.storage;

import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.Crc32C;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Idempotent-producer state of one partition: per producer id, its epoch and the metadata of its last
 * {@value #NUM_BATCHES_TO_RETAIN} batches, used to detect retried (duplicate) batches, sequence gaps and
 * fenced (older-epoch) producers. Mutated only by the owning {@link PartitionLog} under its lock; an append
 * first validates against a {@link Staged} copy, which is committed only after the batches are written.
 */
public final class ProducerStateManager {
    public static final int NUM_BATCHES_TO_RETAIN = 5;
    private static final int SNAPSHOT_MAGIC = 0x534b5053; // "SKPS"

    /** Sequence and offset range of one appended batch. */
    public record BatchMetadata(int firstSeq, int lastSeq, long firstOffset, long lastOffset, long timestamp) {
    }

    /** One producer's epoch and its newest batches (oldest first). */
    public record ProducerStateEntry(long producerId, short producerEpoch, List<BatchMetadata> batches) {
        public Optional<BatchMetadata> last() {
            return batches.isEmpty() ? Optional.empty() : Optional.of(batches.get(batches.size() - 1));
        }

        public long lastOffset() {
            return batches.isEmpty() ? -1 : batches.get(batches.size() - 1).lastOffset();
        }
    }

    /**
     * One producer's epoch and newest batches in a ring of {@value #NUM_BATCHES_TO_RETAIN}: an append stages
     * a copy of it per producer it touches, so the copy is one small array, not a deque and its table.
     */
    private static final class MutableEntry {
        short epoch;
        private final BatchMetadata[] ring;
        /** The slot of the oldest batch. */
        private int oldest;
        private int size;

        MutableEntry(short epoch) {
            this(epoch, new BatchMetadata[NUM_BATCHES_TO_RETAIN], 0, 0);
        }

        private MutableEntry(short epoch, BatchMetadata[] ring, int oldest, int size) {
            this.epoch = epoch;
            this.ring = ring;
            this.oldest = oldest;
            this.size = size;
        }

        MutableEntry copy() {
            return new MutableEntry(epoch, ring.clone(), oldest, size);
        }

        int size() {
            return size;
        }

        /** The {@code i}-th batch, oldest first. */
        BatchMetadata get(int i) {
            return ring[(oldest + i) % ring.length];
        }

        BatchMetadata last() {
            return get(size - 1);
        }

        void clear() {
            Arrays.fill(ring, null);
            oldest = 0;
            size = 0;
        }

        void add(BatchMetadata m) {
            if (size < ring.length) {
                ring[(oldest + size++) % ring.length] = m;
            } else {
                ring[oldest] = m;
                oldest = (oldest + 1) % ring.length;
            }
        }

        List<BatchMetadata> list() {
            BatchMetadata[] out = new BatchMetadata[size];
            for (int i = 0; i < size; i++) {
                out[i] = get(i);
            }
            return List.of(out);
        }
    }

    private final Map<Long, MutableEntry> producers = new HashMap<>();

    /** The state of {@code producerId}, if known. */
    public synchronized Optional<ProducerStateEntry> entry(long producerId) {
        MutableEntry e = producers.get(producerId);
        return e == null ? Optional.empty() : Optional.of(toEntry(producerId, e));
    }

    public synchronized Map<Long, ProducerStateEntry> activeProducers() {
        Map<Long, ProducerStateEntry> out = new HashMap<>();
        producers.forEach((id, e) -> out.put(id, toEntry(id, e)));
        return Collections.unmodifiableMap(out);
    }

    private static ProducerStateEntry toEntry(long id, MutableEntry e) {
        return new ProducerStateEntry(id, e.epoch, e.list());
    }

    Staged stage() {
        return new Staged();
    }

    /** Pending producer-state changes of one append; {@link #commit()} publishes them. */
    final class Staged {
        // Most appends carry batches of one producer: it is staged in these two fields, and a map is made
        // only for a second producer id (the id is boxed once per append, for the shared map).
        private Long firstId;
        private MutableEntry first;
        private Map<Long, MutableEntry> more;

        private MutableEntry current(long producerId) {
            MutableEntry e = staged(producerId);
            if (e == null) {
                Long id = boxed(producerId);
                synchronized (ProducerStateManager.this) {
                    MutableEntry existing = producers.get(id);
                    e = existing == null ? null : existing.copy();
                }
                if (e != null) {
                    put(id, e);
                }
            }
            return e;
        }

        private MutableEntry staged(long producerId) {
            if (first != null && firstId == producerId) {
                return first;
            }
            return more == null ? null : more.get(producerId);
        }

        private Long boxed(long producerId) {
            return firstId != null && firstId == producerId ? firstId : Long.valueOf(producerId);
        }

        private void put(Long id, MutableEntry e) {
            if (first == null || firstId.equals(id)) {
                firstId = id;
                first = e;
            } else {
                if (more == null) {
                    more = new HashMap<>();
                }
                more.put(id, e);
            }
        }

        /** The cached metadata if this leader-appended batch is a retry of one already in the log. */
        Optional<BatchMetadata> findDuplicate(RecordBatch batch) {
            MutableEntry e = current(batch.producerId());
            if (e == null || e.epoch != batch.producerEpoch()) {
                return Optional.empty();
            }
            for (int i = 0, n = e.size(); i < n; i++) {
                BatchMetadata m = e.get(i);
                if (m.firstSeq() == batch.baseSequence() && m.lastSeq() == batch.lastSequence()) {
                    return Optional.of(m);
                }
            }
            return Optional.empty();
        }

        /** Checks epoch and sequence of a leader append; throws the error Kafka returns to the producer. */
        void validate(RecordBatch batch) {
            MutableEntry e = current(batch.producerId());
            if (e == null) {
                // Kafka 4 accepts an unknown producer id at any sequence (its state may have been removed by
                // retention or expiry); the producer's own bookkeeping catches real gaps.
                return;
            }
            short epoch = batch.producerEpoch();
            int firstSeq = batch.baseSequence();
            if (epoch < e.epoch) {
                throw new InvalidProducerEpochException("Producer " + batch.producerId() + " epoch " + epoch
                        + " is older than the current epoch " + e.epoch);
            }
            if (epoch > e.epoch) {
                if (firstSeq != 0) {
                    throw new OutOfOrderSequenceException("Producer " + batch.producerId() + " bumped epoch to "
                            + epoch + " but sent sequence " + firstSeq + " (expected 0)");
                }
                return;
            }
            int lastSeq = e.size() == 0 ? RecordBatch.NO_SEQUENCE : e.last().lastSeq();
            if (!inSequence(lastSeq, firstSeq)) {
                throw new OutOfOrderSequenceException("Out of order sequence for producer " + batch.producerId()
                        + " at epoch " + epoch + ": got " + firstSeq + ", expected "
                        + (lastSeq == Integer.MAX_VALUE ? 0 : lastSeq + 1));
            }
        }

        /** Records a batch whose offsets are final. */
        void update(RecordBatch batch, long timestamp) {
            long id = batch.producerId();
            MutableEntry e = current(id);
            if (e == null) {
                e = new MutableEntry(batch.producerEpoch());
                put(boxed(id), e);
            } else if (batch.producerEpoch() > e.epoch) {
                e.epoch = batch.producerEpoch();
                e.clear();
            } else if (batch.producerEpoch() < e.epoch) {
                return;
            }
            e.add(new BatchMetadata(batch.baseSequence(), batch.lastSequence(), batch.baseOffset(),
                    batch.lastOffset(), timestamp));
        }

        void commit() {
            if (first == null) {
                return;
            }
            synchronized (ProducerStateManager.this) {
                producers.put(firstId, first);
                if (more != null) {
                    producers.putAll(more);
                }
            }
        }
    }

    private static boolean inSequence(int lastSeq, int nextSeq) {
        return nextSeq == lastSeq + 1L || (nextSeq == 0 && lastSeq == Integer.MAX_VALUE);
    }

    /** Rebuild path: applies a batch read back from the log without validation. */
    void loadBatch(RecordBatch batch) {
        if (!batch.hasProducerId()) {
            return;
        }
        Staged s = stage();
        s.update(batch, batch.maxTimestamp());
        s.commit();
    }

    synchronized void clear() {
        producers.clear();
    }

    // ---- snapshots: <offset>.snapshot, the state after every batch below <offset> ----

    static final String SNAPSHOT_SUFFIX = ".snapshot";

    /** Writes the state as of {@code offset} atomically; removes older snapshots. */
    synchronized void writeSnapshot(Path dir, long offset) throws IOException {
        int size = 12;
        for (MutableEntry e : producers.values()) {
            size += 8 + 2 + 4 + e.size() * 32;
        }
        ByteBuffer buf = ByteBuffer.allocate(size + 4);
        buf.putInt(SNAPSHOT_MAGIC).putLong(offset);
        for (Map.Entry<Long, MutableEntry> pe : producers.entrySet()) {
            MutableEntry e = pe.getValue();
            buf.putLong(pe.getKey()).putShort(e.epoch).putInt(e.size());
            for (int i = 0, n = e.size(); i < n; i++) {
                BatchMetadata m = e.get(i);
                buf.putInt(m.firstSeq()).putInt(m.lastSeq()).putLong(m.firstOffset()).putLong(m.lastOffset())
                        .putLong(m.timestamp());
            }
        }
        buf.putInt(producers.size());
        long crc = Crc32C.compute(buf.array(), 0, buf.position());
        ByteBuffer out = ByteBuffer.allocate(buf.position() + 4);
        out.put(buf.array(), 0, buf.position()).putInt((int) crc).flip();
        Path target = dir.resolve(LogSegment.fileName(offset, SNAPSHOT_SUFFIX));
        Checkpoints.writeAtomically(target, out);
        deleteSnapshotsExcept(dir, target);
    }

    /** Loads {@code <offset>.snapshot} if present and intact; returns whether it did. */
    synchronized boolean loadSnapshot(Path dir, long offset) {
        Path file = dir.resolve(LogSegment.fileName(offset, SNAPSHOT_SUFFIX));
        if (!Files.exists(file)) {
            return false;
        }
        try {
            byte[] bytes = Files.readAllBytes(file);
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            int storedCrc = buf.getInt(bytes.length - 4);
            if ((int) Crc32C.compute(bytes, 0, bytes.length - 4) != storedCrc
                    || buf.getInt() != SNAPSHOT_MAGIC || buf.getLong() != offset) {
                return false;
            }
            int count = buf.getInt(bytes.length - 8);
            Map<Long, MutableEntry> loaded = new HashMap<>();
            for (int i = 0; i < count; i++) {
                long id = buf.getLong();
                MutableEntry e = new MutableEntry(buf.getShort());
                int n = buf.getInt();
                for (int j = 0; j < n; j++) {
                    e.add(new BatchMetadata(buf.getInt(), buf.getInt(), buf.getLong(), buf.getLong(), buf.getLong()));
                }
                loaded.put(id, e);
            }
            producers.clear();
            producers.putAll(loaded);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    static void deleteSnapshotsExcept(Path dir, Path keep) throws IOException {
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                if (p.getFileName().toString().endsWith(SNAPSHOT_SUFFIX) && !p.equals(keep)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
