package dev.skein.broker.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.apache.kafka.common.message.ApiVersionsResponseData;

import java.net.InetSocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka listener: a Netty server whose per-connection pipeline is frame decoder → connection
 * handler (request decode, dispatch, ordered responses). NIO transport, so record data leaves
 * segment files through {@code FileChannel.transferTo}.
 */
public final class SocketServer implements AutoCloseable {
    private final String host;
    private final int port;
    private final int maxRequestBytes;
    private final int networkThreads;
    private final RequestHandler handler;
    private final Executor requestPool;
    private final ApiVersionsResponseData supportedApis;
    private final RequestMetrics metrics;
    private final BadClientLog badClients = new BadClientLog();
    private EventLoopGroup bossGroup;
    private EventLoopGroup workerGroup;
    private Channel serverChannel;

    public SocketServer(String host, int port, int maxRequestBytes, int networkThreads, RequestHandler handler,
                        Executor requestPool, ApiVersionsResponseData supportedApis, RequestMetrics metrics) {
        this.host = host;
        this.port = port;
        this.maxRequestBytes = maxRequestBytes;
        this.networkThreads = networkThreads;
        this.handler = handler;
        this.requestPool = requestPool;
        this.supportedApis = supportedApis;
        this.metrics = metrics;
    }

    /** Binds the listener; returns the bound port (useful with port 0). */
    public int start() throws InterruptedException {
        bossGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("skein-acceptor", true),
                NioIoHandler.newFactory());
        workerGroup = new MultiThreadIoEventLoopGroup(networkThreads, new DefaultThreadFactory("skein-network", true),
                NioIoHandler.newFactory());
        ServerBootstrap b = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 512)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast("frames", new FrameDecoder(maxRequestBytes, badClients))
                                .addLast("requests", new ConnectionHandler(handler, requestPool, supportedApis,
                                        badClients, metrics));
                    }
                });
        InetSocketAddress address = host == null || host.isEmpty()
                ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        serverChannel = b.bind(address).sync().channel();
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    @Override
    public void close() {
        if (serverChannel != null) {
            serverChannel.close().awaitUninterruptibly();
        }
        if (bossGroup != null) {
            bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
        if (workerGroup != null) {
            workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }
}
