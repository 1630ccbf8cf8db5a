package dev.skein.broker.network;

import dev.skein.broker.api.SupportedApis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code skein.network.inline.requests} on, Produce and Fetch are handled on the connection's
 * event loop: an answer ready when the handler returns is written before the read returns, with no
 * hand-off to the request pool; one completed later is written once it completes; requests of one
 * connection are still answered one at a time in order, and every frame is released.
 */
class InlineRequestsTest {
    private final List<AbstractRequest> received = new ArrayList<>();
    private final Queue<Runnable> pool = new ArrayDeque<>();
    private EmbeddedChannel channel;

    private void start(Function<AbstractRequest, CompletableFuture<Response>> answer) {
        RequestHandler handler = (context, request) -> {
            received.add(request);
            return answer.apply(request);
        };
        BadClientLog badClients = new BadClientLog();
        channel = new EmbeddedChannel(
                new FrameDecoder(1 << 20, badClients),
                new ConnectionHandler(handler, pool::add, SupportedApis.response(), badClients,
                        new RequestMetrics(new SimpleMeterRegistry(), Time.SYSTEM, SupportedApis.apis()), true)) {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000);
            }
        };
    }

    @AfterEach
    void tearDown() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
    }

    private static ByteBuf produceFrame(int correlationId) {
        byte[] frame = RawFrames.frame(RawFrames.produce("t", 0, RawFrames.records("k", "v"), (short) 1),
                RawFrames.header(ApiKeys.PRODUCE, RawFrames.PRODUCE_VERSION, correlationId));
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(frame.length);
        in.writeBytes(frame);
        return in;
    }

    /** The correlation ids of the responses written so far, in order. */
    private List<Integer> answeredCorrelationIds() {
        ByteBuf all = Unpooled.buffer();
        for (Object msg; (msg = channel.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) msg;
            all.writeBytes(b);
            b.release();
        }
        List<Integer> ids = new ArrayList<>();
        while (all.readableBytes() >= 4) {
            int size = all.readInt();
            ids.add(all.getInt(all.readerIndex()));
            all.skipBytes(size);
        }
        assertThat(all.readableBytes()).as("whole frames only").isZero();
        all.release();
        return ids;
    }

    @Test
    void aProduceAnsweredAtOnceIsWrittenOnTheEventLoopWithoutThePool() {
        start(r -> CompletableFuture.completedFuture(Response.reply(new ProduceResponseData())));
        ByteBuf in = produceFrame(7);
        channel.writeInbound(in);

        assertThat(pool).as("nothing handed to the request pool").isEmpty();
        assertThat(answeredCorrelationIds()).as("written before the read returned").containsExactly(7);
        assertThat(in.refCnt()).isZero();
    }

    @Test
    void pipelinedProducesAnsweredAtOnceAreAllAnsweredInOrder() {
        start(r -> CompletableFuture.completedFuture(Response.reply(new ProduceResponseData())));
        ByteBuf all = PooledByteBufAllocator.DEFAULT.directBuffer();
        for (int id = 1; id <= 40; id++) {
            ByteBuf f = produceFrame(id);
            all.writeBytes(f);
            f.release();
        }
        channel.writeInbound(all);

        List<Integer> expected = new ArrayList<>();
        for (int id = 1; id <= 40; id++) {
            expected.add(id);
        }
        assertThat(answeredCorrelationIds()).isEqualTo(expected);
        assertThat(received).hasSize(40);
        assertThat(all.refCnt()).isZero();
        assertThat(channel.config().isAutoRead()).as("reading resumes once the queue is drained").isTrue();
    }

    @Test
    void aProduceAnsweredLaterHoldsBackTheNextRequestUntilItIsWritten() {
        List<CompletableFuture<Response>> later = new ArrayList<>();
        start(r -> {
            CompletableFuture<Response> f = new CompletableFuture<>();
            later.add(f);
            return f;
        });
        ByteBuf first = produceFrame(1);
        ByteBuf second = produceFrame(2);
        channel.writeInbound(first);
        channel.writeInbound(second);
        assertThat(received).as("one request at a time per connection").hasSize(1);
        assertThat(answeredCorrelationIds()).isEmpty();
        assertThat(first.refCnt()).as("held while the request waits (acks=all)").isPositive();

        later.getFirst().complete(Response.reply(new ProduceResponseData()));
        channel.runPendingTasks();
        assertThat(received).hasSize(2);
        later.get(1).complete(Response.reply(new ProduceResponseData()));
        channel.runPendingTasks();
        assertThat(answeredCorrelationIds()).containsExactly(1, 2);
        assertThat(first.refCnt()).isZero();
        assertThat(second.refCnt()).isZero();
        assertThat(pool).isEmpty();
    }

    @Test
    void aHandlerThatThrowsGetsTheApisErrorResponseAndTheConnectionStaysOpen() {
        start(r -> {
            throw new IllegalStateException("boom");
        });
        ByteBuf in = produceFrame(3);
        channel.writeInbound(in);

        ByteBuf out = Unpooled.buffer();
        for (Object msg; (msg = channel.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) msg;
            out.writeBytes(b);
            b.release();
        }
        ByteBuffer body = out.nioBuffer();
        body.getInt();
        ResponseHeader header = ResponseHeader.parse(body, ApiKeys.PRODUCE.responseHeaderVersion(RawFrames.PRODUCE_VERSION));
        assertThat(header.correlationId()).isEqualTo(3);
        ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(body), RawFrames.PRODUCE_VERSION);
        assertThat(response.responses().iterator().next().partitionResponses().getFirst().errorCode())
                .isEqualTo(Errors.UNKNOWN_SERVER_ERROR.code());
        out.release();
        assertThat(channel.isOpen()).isTrue();
        assertThat(in.refCnt()).isZero();
    }

    @Test
    void otherApisStillGoToTheRequestPool() {
        start(r -> CompletableFuture.completedFuture(Response.reply(new MetadataResponseData())));
        byte[] frame = RawFrames.frame(new MetadataRequest.Builder(List.of("t"), false).build((short) 12),
                RawFrames.header(ApiKeys.METADATA, (short) 12, 5));
        channel.writeInbound(Unpooled.wrappedBuffer(frame));

        assertThat(received).as("not handled on the event loop").isEmpty();
        assertThat(pool).hasSize(1);
        pool.poll().run();
        channel.runPendingTasks();
        assertThat(received).hasSize(1);
        assertThat(answeredCorrelationIds()).containsExactly(5);
    }
}
