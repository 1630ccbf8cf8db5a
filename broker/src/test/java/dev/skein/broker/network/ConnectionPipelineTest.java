package dev.skein.broker.network;

import dev.skein.broker.api.SupportedApis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Frame decoder + connection handler on an {@link EmbeddedChannel}: what the broker does with malformed input. */
class ConnectionPipelineTest {
    private static final int MAX_FRAME = 1024;

    private final AtomicInteger handled = new AtomicInteger();
    private EmbeddedChannel channel;

    @BeforeEach
    void setUp() {
        RequestHandler handler = (context, request) -> {
            handled.incrementAndGet();
            return CompletableFuture.failedFuture(new AssertionError("no malformed request may reach the handler"));
        };
        BadClientLog badClients = new BadClientLog();
        channel = new EmbeddedChannel(
                new FrameDecoder(MAX_FRAME, badClients),
                new ConnectionHandler(handler, Runnable::run, SupportedApis.response(), badClients,
                        new RequestMetrics(new SimpleMeterRegistry(), Time.SYSTEM, SupportedApis.apis())));
    }

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
    }

    @Test
    void frameLargerThanSocketRequestMaxBytesClosesBeforeBuffering() {
        ByteBuf in = Unpooled.wrappedBuffer(RawFrames.sizeOnly(MAX_FRAME + 1));
        channel.writeInbound(in);
        assertThat(channel.isOpen()).isFalse();
        assertThat(handled).hasValue(0);
    }

    @Test
    void frameOfExactlyTheMaximumIsBufferedNotRejected() {
        channel.writeInbound(Unpooled.wrappedBuffer(RawFrames.sizeOnly(MAX_FRAME)));
        assertThat(channel.isOpen()).isTrue();
        assertThat(handled).hasValue(0);
    }

    @Test
    void negativeFrameSizeClosesTheConnection() {
        channel.writeInbound(Unpooled.wrappedBuffer(RawFrames.sizeOnly(-1)));
        assertThat(channel.isOpen()).isFalse();
        assertThat(handled).hasValue(0);
    }

    @Test
    void produceFrameWithTruncatedBodyClosesTheConnection() {
        channel.writeInbound(Unpooled.wrappedBuffer(RawFrames.truncatedProduce(7)));
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(handled).hasValue(0);
    }

    @Test
    void unknownApiKeyClosesTheConnection() {
        channel.writeInbound(Unpooled.wrappedBuffer(RawFrames.unknownApiKey(8)));
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(handled).hasValue(0);
    }

    @Test
    void apiVersionsWithUnsupportedVersionGetsV0ResponseWithUnsupportedVersionAndTheApiList() {
        channel.writeInbound(Unpooled.wrappedBuffer(RawFrames.apiVersionsV99(42)));
        channel.runPendingTasks();

        ByteBuffer response = readResponse();
        assertThat(response.getInt()).as("correlation id").isEqualTo(42);
        ApiVersionsResponseData data = new ApiVersionsResponseData(new ByteBufferAccessor(response), (short) 0);
        assertThat(data.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code()).isEqualTo((short) 35);
        assertThat(data.apiKeys().find(ApiKeys.API_VERSIONS.id)).isNotNull();
        assertThat(data.apiKeys().find(ApiKeys.PRODUCE.id)).isNotNull();
        assertThat(data.apiKeys().find(ApiKeys.FETCH.id)).isNotNull();
        assertThat(response.hasRemaining()).isFalse();
        assertThat(channel.isOpen()).isTrue();
        assertThat(handled).hasValue(0);
    }

    /** Reads everything written outbound as one size-prefixed response frame; returns its body. */
    private ByteBuffer readResponse() {
        ByteBuf all = Unpooled.buffer();
        Object msg;
        while ((msg = channel.readOutbound()) != null) {
            ByteBuf b = (ByteBuf) msg;
            all.writeBytes(b);
            b.release();
        }
        assertThat(all.readableBytes()).isGreaterThanOrEqualTo(4);
        int size = all.readInt();
        assertThat(all.readableBytes()).isEqualTo(size);
        byte[] body = new byte[size];
        all.readBytes(body);
        all.release();
        return ByteBuffer.wrap(body);
    }
}
