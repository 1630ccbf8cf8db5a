package dev.skein.broker.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
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
 * handler (request decode, dispatch, ordered responses).
 *
 * <p>The transport is Netty's native epoll transport where its library loads (Linux x86-64), else
 * NIO. Every response is completed on a request-handler thread and handed to its connection's
 * event loop, which wakes a sleeping loop; epoll's wake-up is one {@code eventfd} write that the
 * loop never has to drain, where the NIO selector's takes a lock and is drained after every
 * select, and epoll writes gathered buffers and {@link io.netty.channel.DefaultFileRegion}s (so
 * record data leaves segment files with {@code sendfile}) without the JDK's per-write overhead.
 * {@code -Dio.netty.transport.noNative=true} forces NIO.
 */
public final class SocketServer implements AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(SocketServer.class);

    /** The event-loop transport of the listener. */
    public enum Transport {
        EPOLL, NIO;

        /** Epoll when Netty's native library loaded on this machine, else NIO. */
        public static Transport available() {
            return Epoll.isAvailable() ? EPOLL : NIO;
        }

        IoHandlerFactory ioHandlerFactory() {
            return this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        }

        Class<? extends ServerChannel> serverChannelClass() {
            return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        }
    }

    private final String host;
    private final int port;
    private final int maxRequestBytes;
    private final int networkThreads;
    private final RequestHandler handler;
    private final Executor requestPool;
    private final ApiVersionsResponseData supportedApis;
    private final RequestMetrics metrics;
    private final BadClientLog badClients = new BadClientLog();
    private final Transport transport;
    private boolean inlineRequests;
    private int sendBufferBytes = -1;
    private int receiveBufferBytes = -1;
    private EventLoopGroup bossGroup;
    private EventLoopGroup workerGroup;
    private Channel serverChannel;

    public SocketServer(String host, int port, int maxRequestBytes, int networkThreads, RequestHandler handler,
                        Executor requestPool, ApiVersionsResponseData supportedApis, RequestMetrics metrics) {
        this(host, port, maxRequestBytes, networkThreads, handler, requestPool, supportedApis, metrics,
                Transport.available());
    }

    SocketServer(String host, int port, int maxRequestBytes, int networkThreads, RequestHandler handler,
                 Executor requestPool, ApiVersionsResponseData supportedApis, RequestMetrics metrics, Transport transport) {
        this.transport = transport;
        this.host = host;
        this.port = port;
        this.maxRequestBytes = maxRequestBytes;
        this.networkThreads = networkThreads;
        this.handler = handler;
        this.requestPool = requestPool;
        this.supportedApis = supportedApis;
        this.metrics = metrics;
    }

    /**
     * Produce and Fetch are handled on the network threads (see {@link ConnectionHandler}) for the
     * connections accepted from {@link #start()} on; off by default.
     */
    public SocketServer inlineRequests(boolean inline) {
        this.inlineRequests = inline;
        return this;
    }

    /**
     * SO_SNDBUF and SO_RCVBUF of the connections accepted from {@link #start()} on; -1 (the default)
     * leaves either to the operating system. The receive buffer is set on the listening socket, which
     * its connections inherit: the window it allows is offered in the TCP handshake already.
     */
    public SocketServer socketBuffers(int sendBytes, int receiveBytes) {
        this.sendBufferBytes = sendBytes;
        this.receiveBufferBytes = receiveBytes;
        return this;
    }

    /** Binds the listener; returns the bound port (useful with port 0). */
    public int start() throws InterruptedException {
        if (transport == Transport.NIO) {
            log.info("Kafka listener on the NIO transport (epoll unavailable: {})", String.valueOf(Epoll.unavailabilityCause()));
        }
        bossGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("skein-acceptor", true),
                transport.ioHandlerFactory());
        workerGroup = new MultiThreadIoEventLoopGroup(networkThreads, new DefaultThreadFactory("skein-network", true),
                transport.ioHandlerFactory());
        ServerBootstrap b = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(transport.serverChannelClass())
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
                                        badClients, metrics, inlineRequests));
                    }
                });
        if (sendBufferBytes > 0) {
            b.childOption(ChannelOption.SO_SNDBUF, sendBufferBytes);
        }
        if (receiveBufferBytes > 0) {
            b.option(ChannelOption.SO_RCVBUF, receiveBufferBytes);
        }
        InetSocketAddress address = host == null || host.isEmpty()
                ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        serverChannel = b.bind(address).sync().channel();
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** The transport this listener runs on. */
    public Transport transport() {
        return transport;
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
