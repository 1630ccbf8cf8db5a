package dev.skein.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * One connection's request pipeline: parses each frame's header and body, hands the request to the
 * {@link RequestHandler} on the request-handler pool, and writes responses in request order.
 *
 * <p>Produce and Fetch (when {@code inline} is on, the default) are handled on the connection's event
 * loop itself rather than on the pool: they do not block (an append writes to the page cache, a
 * fetch that must wait is filed in the purgatory), and each hand-off to the pool and back costs two
 * thread wake-ups, which on two cores were a large part of a request's cost. A response that is
 * ready when the handler returns is written at once; one completed later (acks=all, a long poll) is
 * written from the event loop as before.
 *
 * <p>Like Kafka, a connection has at most one request being handled at a time; later frames wait in
 * arrival order (so pipelined produce requests are appended in the order they were sent), and
 * reading from the socket pauses while too many are waiting. All fields are touched only on the
 * connection's event loop.
 *
 * <p>A frame is a slice of the bytes Netty read from the socket (see {@link FrameDecoder}), and the
 * parsed request reads its strings from it and keeps its records as views of it (a produce request's
 * batches are validated, assigned offsets and written to the log from these bytes, never copied to
 * the heap). So a frame is released only when nothing can read it any more: after its request's
 * response is written or dropped, when the handler's future has completed; frames never dispatched
 * are released when the connection closes.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ConnectionHandler.class);
    private static final int MAX_QUEUED = 32;

    private final RequestHandler handler;
    private final Executor requestPool;
    private final ApiVersionsResponseData supportedApis;
    private final BadClientLog badClients;
    private final RequestMetrics metrics;
    private final boolean inline;
    private final ArrayDeque<ByteBuf> queued = new ArrayDeque<>();
    private boolean busy;
    private boolean closed;

    ConnectionHandler(RequestHandler handler, Executor requestPool, ApiVersionsResponseData supportedApis,
                      BadClientLog badClients, RequestMetrics metrics) {
        this(handler, requestPool, supportedApis, badClients, metrics, false);
    }

    /** @param inline Produce and Fetch are handled on the event loop, not on {@code requestPool} */
    ConnectionHandler(RequestHandler handler, Executor requestPool, ApiVersionsResponseData supportedApis,
                      BadClientLog badClients, RequestMetrics metrics, boolean inline) {
        this.inline = inline;
        this.handler = handler;
        this.requestPool = requestPool;
        this.supportedApis = supportedApis;
        this.badClients = badClients;
        this.metrics = metrics;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        metrics.connectionOpened();
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        closed = true;
        releaseQueued();
        metrics.connectionClosed();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (closed) {
            frame.release();
            return;
        }
        queued.add(frame);
        if (queued.size() >= MAX_QUEUED) {
            ctx.channel().config().setAutoRead(false);
        }
        if (!busy) {
            processNext(ctx);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        badClients.closing(ctx.channel(), cause.getClass().getSimpleName() + ": " + cause.getMessage());
        ctx.close();
    }

    private void processNext(ChannelHandlerContext ctx) {
        while (!busy && !closed) {
            ByteBuf frame = queued.poll();
            if (frame == null) {
                if (!ctx.channel().config().isAutoRead()) {
                    ctx.channel().config().setAutoRead(true);
                }
                return;
            }
            busy = true;
            dispatch(ctx, frame);
        }
    }

    private void dispatch(ChannelHandlerContext ctx, ByteBuf frame) {
        long startNs = metrics.nanoTime();
        ByteBuffer bytes = frame.nioBuffer();
        RequestHeader header;
        try {
            header = RequestHeader.parse(bytes);
        } catch (InvalidRequestException e) {
            frame.release();
            closeBadClient(ctx, e.getMessage());
            return;
        }
        ApiKeys api = header.apiKey();
        if (api == ApiKeys.API_VERSIONS && !api.isVersionSupported(header.apiVersion())) {
            // KIP-511: answer an unknown ApiVersions version with a v0 response naming what we support
            ApiVersionsResponseData unsupported = new ApiVersionsResponseData()
                    .setErrorCode(Errors.UNSUPPORTED_VERSION.code())
                    .setApiKeys(supportedApis.apiKeys().duplicate());
            frame.release();
            writeThenNext(ctx, new ResponseHeader(header.correlationId(), (short) 0), unsupported, (short) 0, api, startNs);
            return;
        }
        if (supportedApis.apiKeys().find(api.id) == null) {
            frame.release();
            closeBadClient(ctx, "unsupported API " + api + " (key " + api.id + ")");
            return;
        }
        AbstractRequest request;
        try {
            request = AbstractRequest.parseRequest(api, header.apiVersion(), new ByteBufferAccessor(bytes)).request;
        } catch (RuntimeException e) {
            frame.release();
            closeBadClient(ctx, "malformed " + api + " v" + header.apiVersion() + " request: "
                    + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
            return;
        }
        InetSocketAddress remote = (InetSocketAddress) ctx.channel().remoteAddress();
        RequestContext context = new RequestContext(header, remote.getAddress());
        CompletableFuture<Response> future;
        if (inline && (api == ApiKeys.PRODUCE || api == ApiKeys.FETCH)) {
            try {
                future = handler.handle(context, request);
            } catch (RuntimeException e) {
                future = CompletableFuture.failedFuture(e);
            }
            if (future.isDone()) {
                Response result = null;
                Throwable error = null;
                try {
                    result = future.join();
                } catch (RuntimeException e) {
                    error = e;
                }
                complete(ctx, frame, header, request, startNs, result, error);
                return;
            }
        } else {
            try {
                future = CompletableFuture.supplyAsync(() -> handler.handle(context, request), requestPool)
                        .thenCompose(f -> f);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                frame.release();
                ctx.close();
                return;
            }
        }
        future.whenComplete((result, error) -> ctx.executor().execute(
                () -> complete(ctx, frame, header, request, startNs, result, error)));
    }

    /** On the event loop, once the handler's future has completed: releases the frame, answers, takes the next. */
    private void complete(ChannelHandlerContext ctx, ByteBuf frame, RequestHeader header, AbstractRequest request,
                          long startNs, Response result, Throwable error) {
        // the handler is done with the request (its records were appended, its strings read): the
        // bytes it was parsed from can go back to the pool, whatever happens to the response
        frame.release();
        if (closed) {
            return;
        }
        ApiKeys api = header.apiKey();
        Response response = result;
        if (error != null) {
            Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                    ? error.getCause() : error;
            // an unexpected failure of a handler: answer with the error response of the API, as Kafka does
            log.error("Error handling {} from {}", api, ctx.channel().remoteAddress(), cause);
            response = Response.reply(request.getErrorResponse(0, cause).data());
        }
        switch (response) {
            case Response.Reply reply ->
                    writeThenNext(ctx, header.toResponseHeader(), reply.body(), header.apiVersion(), api, startNs);
            case Response.NoReply none -> {
                metrics.record(api, metrics.nanoTime() - startNs, 0);
                busy = false;
                processNext(ctx);
            }
            case Response.Close close -> closeBadClient(ctx, close.reason());
        }
    }

    private void writeThenNext(ChannelHandlerContext ctx, ResponseHeader header,
                               org.apache.kafka.common.protocol.ApiMessage body, short version, ApiKeys api, long startNs) {
        try {
            long bytes = ResponseWriter.write(ctx, header, body, version);
            ctx.flush();
            metrics.record(api, metrics.nanoTime() - startNs, bytes);
        } catch (ClosedChannelException e) {
            // not the client's doing: its partition's log was deleted or closed since the read. It reconnects and
            // fetches again, and learns where the partition went.
            log.info("Closing connection from {}: a segment file of its {} response was closed before it could be sent",
                    ctx.channel().remoteAddress(), api);
            ctx.close();
            return;
        } catch (Exception e) {
            badClients.closing(ctx.channel(), "could not encode " + api + " response: " + e);
            ctx.close();
            return;
        }
        busy = false;
        processNext(ctx);
    }

    private void closeBadClient(ChannelHandlerContext ctx, String reason) {
        badClients.closing(ctx.channel(), reason);
        closed = true;
        releaseQueued();
        ctx.close();
    }

    private void releaseQueued() {
        for (ByteBuf frame; (frame = queued.poll()) != null; ) {
            frame.release();
        }
    }
}
