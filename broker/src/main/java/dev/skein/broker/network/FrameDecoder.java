package dev.skein.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;

/**
 * Splits the byte stream into Kafka request frames (a 4-byte big-endian size, then that many bytes).
 * A frame larger than {@code socket.request.max.bytes} or with a negative size closes the
 * connection before any of it is buffered, as Kafka does; each frame is emitted as a retained slice
 * ({@link ByteBuf}) of the bytes read from the socket, holding exactly the frame's body: no copy, and
 * nothing allocated on the heap per request. Whoever takes a frame releases it (the
 * {@link ConnectionHandler}, once the request's response is written or the request dropped).
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    private final int maxFrameBytes;
    private final BadClientLog badClients;

    public FrameDecoder(int maxFrameBytes, BadClientLog badClients) {
        this.maxFrameBytes = maxFrameBytes;
        this.badClients = badClients;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.readableBytes() >= 4) {
            int size = in.getInt(in.readerIndex());
            if (size < 0 || size > maxFrameBytes) {
                badClients.closing(ctx.channel(), size < 0
                        ? "invalid negative frame size " + size
                        : "frame of " + size + " bytes is larger than socket.request.max.bytes (" + maxFrameBytes + ")");
                in.skipBytes(in.readableBytes());
                ctx.close();
                return;
            }
            if (in.readableBytes() < 4 + size) {
                return;
            }
            in.skipBytes(4);
            out.add(in.readRetainedSlice(size));
        }
    }
}
