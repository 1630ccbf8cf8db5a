package dev.skein.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

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
}
