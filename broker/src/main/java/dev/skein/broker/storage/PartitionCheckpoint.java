package dev.skein.broker.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The durable per-partition bookkeeping, one small text file {@code partition.checkpoint} replaced atomically:
 * log start offset (DeleteRecords/retention), recovery point (everything below it was fsynced), cleaner
 * checkpoint (everything below it is compacted) and the leader epoch entries.
 */
record PartitionCheckpoint(long logStartOffset, long recoveryPoint, long cleanerCheckpoint,
                           List<LeaderEpochCache.EpochEntry> epochs) {
    static final String FILE = "partition.checkpoint";
    private static final String HEADER = "skein-partition-checkpoint 1";

    static PartitionCheckpoint empty() {
        return new PartitionCheckpoint(0, 0, 0, List.of());
    }

    void write(Path dir) throws IOException {
        StringBuilder sb = new StringBuilder(HEADER).append('\n')
                .append("logStartOffset ").append(logStartOffset).append('\n')
                .append("recoveryPoint ").append(recoveryPoint).append('\n')
                .append("cleanerCheckpoint ").append(cleanerCheckpoint).append('\n');
        for (LeaderEpochCache.EpochEntry e : epochs) {
            sb.append("epoch ").append(e.epoch()).append(' ').append(e.startOffset()).append('\n');
        }
        sb.append("end\n");
        Checkpoints.writeAtomically(dir.resolve(FILE), sb.toString());
    }

    /** Reads the checkpoint; a missing or malformed file reads as empty (everything gets recovered). */
    static PartitionCheckpoint read(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return empty();
        }
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            if (lines.isEmpty() || !lines.get(0).equals(HEADER) || !lines.get(lines.size() - 1).equals("end")) {
                return empty();
            }
            long start = 0;
            long recovery = 0;
            long cleaner = 0;
            List<LeaderEpochCache.EpochEntry> epochs = new ArrayList<>();
            for (String line : lines.subList(1, lines.size() - 1)) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "logStartOffset" -> start = Long.parseLong(f[1]);
                    case "recoveryPoint" -> recovery = Long.parseLong(f[1]);
                    case "cleanerCheckpoint" -> cleaner = Long.parseLong(f[1]);
                    case "epoch" -> epochs.add(new LeaderEpochCache.EpochEntry(Integer.parseInt(f[1]), Long.parseLong(f[2])));
                    default -> {
                        return empty();
                    }
                }
            }
            return new PartitionCheckpoint(start, recovery, cleaner, epochs);
        } catch (IOException | RuntimeException e) {
            return empty();
        }
    }
}
