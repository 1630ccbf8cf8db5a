package dev.skein.broker.network;

import dev.skein.broker.storage.LogConfig;
import dev.skein.broker.storage.PartitionLog;
import dev.skein.broker.testing.ManualTime;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A response leaves as few messages: the in-memory bytes between two file ranges as one direct
 * buffer, each range of a segment file as a file region (not copied), and the bytes on the wire
 * decode to the response that was written.
 */
class ResponseWriterTest {
    private static final short FETCH_VERSION = 16;

    @TempDir
    Path dir;
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private FileRecords file;

    @AfterEach
    void tearDown() throws Exception {
        channel.finishAndReleaseAll();
        if (file != null) {
            file.close();
        }
    }

    @Test
    void aFetchResponseOfManyPartitionsIsOneBufferPerRunAroundEachFileRange() throws Exception {
        file = FileRecords.open(dir.resolve("00000000000000000000.log").toFile());
        file.append(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("one".getBytes()),
                new SimpleRecord("two".getBytes())));
        file.flush();

        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
                .setTopicId(Uuid.randomUuid());
        for (int p = 0; p < 20; p++) {
            topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p)
                    .setHighWatermark(p).setRecords(p == 7 ? file : MemoryRecords.EMPTY));
        }
        FetchResponseData response = new FetchResponseData().setResponses(List.of(topic));
        ChannelHandlerContext ctx = channel.pipeline().firstContext();

        long written = ResponseWriter.write(ctx, new ResponseHeader(42, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)),
                response, FETCH_VERSION);
        channel.flush();

        List<Object> parts = new ArrayList<>();
        Object msg;
        while ((msg = channel.readOutbound()) != null) {
            parts.add(msg);
        }
        assertThat(parts).hasSize(3);
        assertThat(parts.get(0)).isInstanceOf(ByteBuf.class);
        assertThat(((ByteBuf) parts.get(0)).isDirect()).isTrue();
        assertThat(parts.get(1)).as("a DefaultFileRegion, which the epoll transport sends with sendfile")
                .isInstanceOf(DefaultFileRegion.class);
        assertThat(((FileRegion) parts.get(1)).count()).as("the records stay in the file").isEqualTo(file.sizeInBytes());
        assertThat(parts.get(2)).isInstanceOf(ByteBuf.class);

        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        WritableByteChannel out = Channels.newChannel(wire);
        for (Object part : parts) {
            if (part instanceof ByteBuf b) {
                b.readBytes(wire, b.readableBytes());
                b.release();
            } else {
                FileRegion region = (FileRegion) part;
                while (region.transferred() < region.count()) {
                    region.transferTo(out, region.transferred());
                }
                region.release();
            }
        }
        assertThat(file.channel().isOpen()).as("releasing the region leaves the segment's file open").isTrue();
        ByteBuffer frame = ByteBuffer.wrap(wire.toByteArray());
        assertThat((long) frame.remaining()).isEqualTo(written);
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        assertThat(ResponseHeader.parse(frame, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)).correlationId()).isEqualTo(42);
        FetchResponseData decoded = new FetchResponseData(new ByteBufferAccessor(frame), FETCH_VERSION);
        assertThat(decoded.responses().get(0).partitions()).hasSize(20);
        FetchResponseData.PartitionData seventh = decoded.responses().get(0).partitions().get(7);
        assertThat(seventh.highWatermark()).isEqualTo(7);
        List<String> values = new ArrayList<>();
        for (Record r : ((MemoryRecords) seventh.records()).records()) {
            values.add(new String(org.apache.kafka.common.utils.Utils.toArray(r.value())));
        }
        assertThat(values).containsExactly("one", "two");
    }
    @Test
    void inMemoryRecordsAreCopiedIntoTheRunAndLeftUnchanged() throws Exception {
        MemoryRecords inline = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("three".getBytes()));
        int size = inline.sizeInBytes();
        ChannelHandlerContext ctx = channel.pipeline().firstContext();
        long written = ResponseWriter.write(ctx, new ResponseHeader(7, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)),
                fetchResponse(MemoryRecords.EMPTY, inline), FETCH_VERSION);
        channel.flush();

        ByteBuf only = channel.readOutbound();
        assertThat((Object) channel.readOutbound()).as("no file range: one buffer").isNull();
        assertThat((long) only.readableBytes()).isEqualTo(written);
        ByteBuffer frame = ByteBuffer.allocate(only.readableBytes());
        only.readBytes(frame);
        only.release();
        frame.flip();
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        assertThat(ResponseHeader.parse(frame, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)).correlationId()).isEqualTo(7);
        FetchResponseData decoded = new FetchResponseData(new ByteBufferAccessor(frame), FETCH_VERSION);
        MemoryRecords second = (MemoryRecords) decoded.responses().get(0).partitions().get(1).records();
        assertThat(new String(org.apache.kafka.common.utils.Utils.toArray(second.records().iterator().next().value())))
                .isEqualTo("three");
        assertThat(inline.sizeInBytes()).as("the message's records are not consumed").isEqualTo(size);
        assertThat(inline.buffer().position()).isZero();
    }

    private PartitionLog partition(int p) throws Exception {
        PartitionLog log = PartitionLog.open(dir.resolve("orders-" + p), new TopicPartition("orders", p),
                LogConfig.defaults(), new ManualTime(1_000_000L));
        log.appendAsLeader(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("one".getBytes()),
                new SimpleRecord("two".getBytes())), 0);
        return log;
    }

    private static FetchResponseData fetchResponse(Records... records) {
        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
                .setTopicId(Uuid.randomUuid());
        for (int p = 0; p < records.length; p++) {
            topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p).setRecords(records[p]));
        }
        return new FetchResponseData().setResponses(List.of(topic));
    }

    @Test
    void aSegmentDeletedWhileItsRangeIsInFlightIsClosedOnlyWhenTheRangeIsReleased() throws Exception {
        PartitionLog log = partition(0);
        FileRecords records = (FileRecords) log.read(0, 1 << 20, Long.MAX_VALUE, true).records();
        ChannelHandlerContext ctx = channel.pipeline().firstContext();
        ResponseWriter.write(ctx, new ResponseHeader(1, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)),
                fetchResponse(records), FETCH_VERSION);
        channel.flush();

        log.delete();
        assertThat(records.channel().isOpen()).as("the transport has yet to send the range").isTrue();

        Object msg;
        while ((msg = channel.readOutbound()) != null) {
            if (msg instanceof FileRegion region) {
                ByteArrayOutputStream sent = new ByteArrayOutputStream();
                region.transferTo(Channels.newChannel(sent), 0);
                assertThat(sent.size()).as("the deleted segment's bytes").isEqualTo(records.sizeInBytes());
            }
            io.netty.util.ReferenceCountUtil.release(msg);
        }
        assertThat(records.channel().isOpen()).as("sent: its release closed the file").isFalse();
    }

    @Test
    void aResponseNamingAClosedSegmentIsRefusedAndReleasesWhatItLeased() throws Exception {
        PartitionLog open = partition(0);
        PartitionLog closed = partition(1);
        FileRecords first = (FileRecords) open.read(0, 1 << 20, Long.MAX_VALUE, true).records();
        FileRecords second = (FileRecords) closed.read(0, 1 << 20, Long.MAX_VALUE, true).records();
        closed.delete();
        ChannelHandlerContext ctx = channel.pipeline().firstContext();

        assertThatThrownBy(() -> ResponseWriter.write(ctx, new ResponseHeader(1,
                ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)), fetchResponse(first, second), FETCH_VERSION))
                .isInstanceOf(ClosedChannelException.class);
        channel.flush();
        assertThat((Object) channel.readOutbound()).as("nothing of it was written").isNull();

        open.close();
        assertThat(first.channel().isOpen()).as("the first range's lease was given back").isFalse();
    }
}
