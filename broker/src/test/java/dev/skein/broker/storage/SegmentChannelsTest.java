package dev.skein.broker.storage;

import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.FileRecords;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static dev.skein.broker.storage.TestRecords.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A segment's file stays open while a response holds a lease on it: a delete or close of the log
 * takes effect for the file when the last lease is released, and no lease is given after it.
 */
class SegmentChannelsTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(1_000_000L);

    private static FileChannel channelOf(FetchDataInfo read) {
        return ((FileRecords) read.records()).channel();
    }

    @Test
    void aDeletedLogKeepsALeasedSegmentReadableUntilTheLastRelease() throws Exception {
        PartitionLog log = PartitionLog.open(tmp.resolve("orders-0"), TP, LogConfig.defaults(), time);
        log.appendAsLeader(values(time.milliseconds(), "one", "two"), 0);
        FetchDataInfo read = log.read(0, 1 << 20, Long.MAX_VALUE, true);
        FileChannel channel = channelOf(read);
        int size = read.records().sizeInBytes();

        SegmentChannels.Lease first = SegmentChannels.lease(channel);
        SegmentChannels.Lease second = SegmentChannels.lease(channel);
        log.delete();

        assertThat(Files.exists(tmp.resolve("orders-0"))).as("the files are gone").isFalse();
        assertThat(channel.isOpen()).as("a response still sends from it").isTrue();
        ByteBuffer bytes = ByteBuffer.allocate(size);
        assertThat(channel.read(bytes, 0)).as("the leased range is still the segment's bytes").isEqualTo(size);
        assertThatThrownBy(() -> SegmentChannels.lease(channel)).as("no new sends from a closed segment")
                .isInstanceOf(ClosedChannelException.class);

        first.release();
        assertThat(channel.isOpen()).isTrue();
        second.release();
        assertThat(channel.isOpen()).as("the last release closes it").isFalse();
        assertThat(SegmentChannels.leases(channel)).isZero();
        assertThatThrownBy(() -> SegmentChannels.lease(channel)).isInstanceOf(ClosedChannelException.class);
    }

    @Test
    void aSegmentWithoutLeasesClosesAtOnceAndAReleasedLeaseCannotBeReleasedAgain() throws Exception {
        PartitionLog log = PartitionLog.open(tmp.resolve("orders-0"), TP, LogConfig.defaults(), time);
        log.appendAsLeader(values(time.milliseconds(), "one"), 0);
        FileChannel channel = channelOf(log.read(0, 1 << 20, Long.MAX_VALUE, true));
        SegmentChannels.Lease lease = SegmentChannels.lease(channel);
        lease.release();
        assertThatThrownBy(lease::release).isInstanceOf(IllegalStateException.class);

        log.close();
        assertThat(channel.isOpen()).isFalse();

        // the clean close wrote what a reopen needs: the records are all there
        PartitionLog reopened = PartitionLog.open(tmp.resolve("orders-0"), TP, LogConfig.defaults(), time);
        try {
            assertThat(reopened.logEndOffset()).isEqualTo(1);
        } finally {
            reopened.close();
        }
    }

    @Test
    void aCleanCloseWithALeaseHeldStillFlushesAndTrimsAndClosesAtTheRelease() throws Exception {
        PartitionLog log = PartitionLog.open(tmp.resolve("orders-0"), TP, LogConfig.defaults(), time);
        log.appendAsLeader(values(time.milliseconds(), "one", "two", "three"), 0);
        FileChannel channel = channelOf(log.read(0, 1 << 20, Long.MAX_VALUE, true));
        SegmentChannels.Lease lease = SegmentChannels.lease(channel);

        log.close();
        assertThat(channel.isOpen()).isTrue();
        PartitionLog reopened = PartitionLog.open(tmp.resolve("orders-0"), TP, LogConfig.defaults(), time);
        try {
            assertThat(reopened.logEndOffset()).as("closed cleanly although the file stayed open").isEqualTo(3);
        } finally {
            reopened.close();
        }
        lease.release();
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void aChannelThatIsNotASegmentsIsNotLeasedButAClosedOneIsRefused() throws Exception {
        Path file = tmp.resolve("other");
        try (FileChannel other = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            SegmentChannels.lease(other).release();
            SegmentChannels.lease(other).release();
            assertThat(SegmentChannels.leases(other)).isZero();
            other.close();
            assertThatThrownBy(() -> SegmentChannels.lease(other)).isInstanceOf(ClosedChannelException.class);
        }
    }
}
