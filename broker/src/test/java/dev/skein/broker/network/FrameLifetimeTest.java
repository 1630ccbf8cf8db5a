package dev.skein.broker.network;

import dev.skein.broker.api.SupportedApis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Request frames are slices of the bytes read from the socket, parsed in place (a produce request's
 * records are views of them): they go back to the pool exactly when nothing can read them any more.
 * Too early and a handler still appending would read bytes the pool has handed to another
 * connection; never and the broker leaks direct memory.
 */
class FrameLifetimeTest {
    private final List<CompletableFuture<Response>> pending = new ArrayList<>();
    private final List<AbstractRequest> received = new ArrayList<>();
    private EmbeddedChannel channel;

    private void start() {
        RequestHandler handler = (context, request) -> {
            received.add(request);
            CompletableFuture<Response> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        };
        BadClientLog badClients = new BadClientLog();
        channel = new EmbeddedChannel(
                new FrameDecoder(1 << 20, badClients),
                new ConnectionHandler(handler, Runnable::run, SupportedApis.response(), badClients,
                        new RequestMetrics(new SimpleMeterRegistry(), Time.SYSTEM, SupportedApis.apis()))) {
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

    /** One produce frame in a pooled direct buffer, as the socket read delivers it. */
    private static ByteBuf produceFrame(int correlationId) {
        byte[] frame = RawFrames.frame(RawFrames.produce("t", 0, RawFrames.records("k", "v"), (short) 1),
                RawFrames.header(ApiKeys.PRODUCE, RawFrames.PRODUCE_VERSION, correlationId));
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(frame.length);
        in.writeBytes(frame);
        return in;
    }

    private static MemoryRecords recordsOf(AbstractRequest request) {
        return (MemoryRecords) ((ProduceRequest) request).data().topicData().iterator().next()
                .partitionData().getFirst().records();
    }

    @Test
    void aProduceRequestReadsItsRecordsInPlaceAndTheFrameIsHeldUntilTheResponseIsWritten() {
        start();
        ByteBuf in = produceFrame(1);
        channel.writeInbound(in);
        channel.runPendingTasks();

        assertThat(received).hasSize(1);
        MemoryRecords records = recordsOf(received.getFirst());
        assertThat(records.buffer().isDirect()).as("the records are a view of the socket's bytes, not a copy").isTrue();
        assertThat(in.refCnt()).as("held while the request is being handled").isPositive();
        RecordBatch batch = records.batches().iterator().next();
        batch.ensureValid();

        pending.getFirst().complete(Response.reply(new ProduceResponseData()));
        channel.runPendingTasks();
        assertThat((Object) channel.readOutbound()).as("the response").isNotNull();
        assertThat(in.refCnt()).as("released once answered").isZero();
    }

    @Test
    void aConnectionClosedWhileItsRequestIsHandledReleasesTheFrameOnlyWhenTheHandlerIsDone() {
        start();
        ByteBuf in = produceFrame(1);
        channel.writeInbound(in);
        channel.runPendingTasks();
        assertThat(received).hasSize(1);

        channel.close();
        channel.runPendingTasks();
        assertThat(in.refCnt()).as("a handler still appending these records may read them").isPositive();
        recordsOf(received.getFirst()).batches().iterator().next().ensureValid();

        pending.getFirst().complete(Response.reply(new ProduceResponseData()));
        channel.runPendingTasks();
        assertThat(in.refCnt()).isZero();
    }

    @Test
    void framesQueuedBehindABusyRequestAreReleasedWhenTheConnectionCloses() {
        start();
        ByteBuf first = produceFrame(1);
        ByteBuf second = produceFrame(2);
        ByteBuf third = produceFrame(3);
        channel.writeInbound(first);
        channel.writeInbound(second);
        channel.writeInbound(third);
        channel.runPendingTasks();
        assertThat(received).as("one request at a time per connection").hasSize(1);

        channel.close();
        channel.runPendingTasks();
        assertThat(second.refCnt()).isZero();
        assertThat(third.refCnt()).isZero();
        pending.getFirst().completeExceptionally(new IllegalStateException("handler failed"));
        channel.runPendingTasks();
        assertThat(first.refCnt()).isZero();
        assertThat(received).hasSize(1);
    }

    @Test
    void aMalformedFrameIsReleasedAsTheConnectionCloses() {
        start();
        byte[] cut = RawFrames.truncatedProduce(7);
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(cut.length);
        in.writeBytes(cut);
        channel.writeInbound(in);
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        assertThat(received).isEmpty();
        assertThat(in.refCnt()).isZero();
    }

    @Test
    void pipelinedFramesInOneReadAreEachHandledAndAllReleased() {
        start();
        ByteBuf both = PooledByteBufAllocator.DEFAULT.directBuffer();
        ByteBuf a = produceFrame(1);
        ByteBuf b = produceFrame(2);
        both.writeBytes(a).writeBytes(b);
        a.release();
        b.release();
        channel.writeInbound(both);
        channel.runPendingTasks();
        assertThat(received).hasSize(1);
        pending.getFirst().complete(Response.reply(new ProduceResponseData()));
        channel.runPendingTasks();
        assertThat(received).hasSize(2);
        recordsOf(received.get(1)).batches().iterator().next().ensureValid();
        assertThat(both.refCnt()).as("the second request still reads from the same read buffer").isPositive();
        pending.get(1).complete(Response.reply(new ProduceResponseData()));
        channel.runPendingTasks();
        assertThat(both.refCnt()).isZero();
    }
}
