package dev.skein.broker.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sparse indexes keep new entries in memory and write them to their files in bulk: the files hold
 * every entry after a flush, a close or a bulk write, a reopened file answers lookups as the index did,
 * and truncation with entries still pending leaves a file that loads.
 */
class IndexFilesTest {
    @TempDir
    Path dir;

    private static final long BASE = 1_000;

    @Test
    void entriesReachTheFileInBulkAndAllOfThemOnFlush() throws IOException {
        Path file = dir.resolve("a.index");
        try (OffsetIndex index = new OffsetIndex(file, BASE, 1 << 20)) {
            for (int i = 0; i < AbstractIndex.MAX_PENDING - 1; i++) {
                index.append(BASE + 10L * i, 100 * i);
            }
            assertThat(Files.size(file)).as("no write call per entry").isZero();
            index.append(BASE + 10L * (AbstractIndex.MAX_PENDING - 1), 100 * (AbstractIndex.MAX_PENDING - 1));
            assertThat(Files.size(file)).isEqualTo((long) AbstractIndex.MAX_PENDING * OffsetIndex.ENTRY_SIZE);
            index.append(BASE + 10L * AbstractIndex.MAX_PENDING, 100 * AbstractIndex.MAX_PENDING);
            assertThat(index.lookup(BASE + 10L * AbstractIndex.MAX_PENDING + 5).position())
                    .as("a pending entry answers lookups").isEqualTo(100 * AbstractIndex.MAX_PENDING);
            index.flush();
            assertThat(Files.size(file)).isEqualTo((AbstractIndex.MAX_PENDING + 1L) * OffsetIndex.ENTRY_SIZE);
        }
    }

    @Test
    void aClosedIndexReopensWithEveryEntry() throws IOException {
        Path file = dir.resolve("b.index");
        Path timeFile = dir.resolve("b.timeindex");
        int n = AbstractIndex.MAX_PENDING * 2 + 17;
        try (OffsetIndex index = new OffsetIndex(file, BASE, 1 << 20);
             TimeIndex time = new TimeIndex(timeFile, BASE, 1 << 20)) {
            for (int i = 0; i < n; i++) {
                index.append(BASE + 3L * i, 64 * i);
                time.maybeAppend(5_000L + i, BASE + 3L * i, false);
            }
        }
        try (OffsetIndex index = new OffsetIndex(file, BASE, 1 << 20);
             TimeIndex time = new TimeIndex(timeFile, BASE, 1 << 20)) {
            assertThat(index.load()).isTrue();
            assertThat(time.load()).isTrue();
            assertThat(index.entries()).isEqualTo(n);
            assertThat(time.entries()).isEqualTo(n);
            assertThat(index.lookup(BASE + 3L * (n - 1) + 2).position()).isEqualTo(64 * (n - 1));
            assertThat(index.lookup(BASE + 3L * 200 + 1).position()).isEqualTo(64 * 200);
            assertThat(time.lastTimestamp()).isEqualTo(5_000L + n - 1);
            assertThat(time.lastOffsetBefore(5_000L + 150)).isEqualTo(BASE + 3L * 149);
        }
    }

    @Test
    void truncationBelowAndAbovePendingEntriesLeavesAFileThatLoads() throws IOException {
        Path file = dir.resolve("c.index");
        int n = AbstractIndex.MAX_PENDING + 40;
        try (OffsetIndex index = new OffsetIndex(file, BASE, 1 << 20)) {
            for (int i = 0; i < n; i++) {
                index.append(BASE + i, 10 * i);
            }
            // within the pending entries: the file keeps its bulk-written entries
            index.truncateToPosition(10 * (n - 10));
            assertThat(index.entries()).isEqualTo(n - 10);
            // below what the file holds: the file is cut
            index.truncateToPosition(10 * 50);
            assertThat(index.entries()).isEqualTo(50);
            assertThat(Files.size(file)).isEqualTo(50L * OffsetIndex.ENTRY_SIZE);
            index.append(BASE + 50, 500);
            index.append(BASE + 51, 510);
        }
        try (OffsetIndex index = new OffsetIndex(file, BASE, 1 << 20)) {
            assertThat(index.load()).isTrue();
            assertThat(index.entries()).isEqualTo(52);
            assertThat(index.lastEntry()).isEqualTo(new OffsetIndex.Entry(BASE + 51, 510));
        }
    }
}
