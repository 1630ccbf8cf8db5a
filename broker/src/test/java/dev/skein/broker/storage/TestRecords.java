package dev.skein.broker.storage;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Builders and readers shared by the storage tests. */
final class TestRecords {
    private TestRecords() {
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static MemoryRecords values(long timestamp, String... values) {
        return values(Compression.NONE, timestamp, values);
    }

    static MemoryRecords values(Compression compression, long timestamp, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(timestamp, bytes("k" + i), bytes(values[i]));
        }
        return MemoryRecords.withRecords(compression, records);
    }

    /** Records "key=value" (value "null" means tombstone). */
    static MemoryRecords keyed(long timestamp, String... keyValues) {
        SimpleRecord[] records = new SimpleRecord[keyValues.length];
        for (int i = 0; i < keyValues.length; i++) {
            String[] kv = keyValues[i].split("=", 2);
            records[i] = new SimpleRecord(timestamp, bytes(kv[0]), "null".equals(kv[1]) ? null : bytes(kv[1]));
        }
        return MemoryRecords.withRecords(Compression.NONE, records);
    }

    static MemoryRecords idempotent(long producerId, short epoch, int baseSequence, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(1000L, bytes("k"), bytes(values[i]));
        }
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, baseSequence, records);
    }

    /** Concatenates several single-batch MemoryRecords into one request buffer. */
    static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords p : parts) {
            size += p.sizeInBytes();
        }
        ByteBuffer buf = ByteBuffer.allocate(size);
        for (MemoryRecords p : parts) {
            buf.put(p.buffer());
        }
        return MemoryRecords.readableRecords(buf.flip());
    }

    /** Reads every record of a fetch result (file-backed or in memory) as "offset:key=value". */
    static List<String> contents(Records records) {
        List<String> out = new ArrayList<>();
        for (RecordBatch batch : records.batches()) {
            for (Record r : batch) {
                out.add(r.offset() + ":" + str(r.key()) + "=" + str(r.value()));
            }
        }
        return out;
    }

    static List<Long> offsets(Records records) {
        List<Long> out = new ArrayList<>();
        for (RecordBatch batch : records.batches()) {
            for (Record r : batch) {
                out.add(r.offset());
            }
        }
        return out;
    }

    static List<Long> batchBaseOffsets(Records records) {
        List<Long> out = new ArrayList<>();
        for (RecordBatch batch : records.batches()) {
            out.add(batch.baseOffset());
        }
        return out;
    }

    static byte[] readAll(Records records) throws IOException {
        if (records instanceof FileRecords fr) {
            ByteBuffer buf = ByteBuffer.allocate(fr.sizeInBytes());
            fr.readInto(buf, 0);
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        }
        ByteBuffer buf = ((MemoryRecords) records).buffer();
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }

    private static String str(ByteBuffer b) {
        return b == null ? "null" : Utils.utf8(b);
    }
}
