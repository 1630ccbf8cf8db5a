package dev.skein.bench.jmh;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Record batches like a producer sends them, built once per benchmark with a seeded Random. */
final class Batches {
    private Batches() {
    }

    static MemoryRecords batch(int records, int valueBytes, Compression compression, long seed) {
        Random random = new Random(seed);
        SimpleRecord[] rs = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            byte[] value = new byte[valueBytes];
            // half random, half repeated: compressible like real payloads
            for (int j = 0; j < valueBytes / 2; j++) {
                value[j] = (byte) random.nextInt(256);
            }
            rs[i] = new SimpleRecord(1_700_000_000_000L + i, ("key-" + i).getBytes(StandardCharsets.UTF_8), value);
        }
        return MemoryRecords.withRecords(compression, rs);
    }

    static Compression compression(String name) {
        return switch (name) {
            case "none" -> Compression.NONE;
            case "lz4" -> Compression.lz4().build();
            case "zstd" -> Compression.zstd().build();
            case "gzip" -> Compression.gzip().build();
            case "snappy" -> Compression.snappy().build();
            default -> throw new IllegalArgumentException("unknown compression " + name);
        };
    }
}
