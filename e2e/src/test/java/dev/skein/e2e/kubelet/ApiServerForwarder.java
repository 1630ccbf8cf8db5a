package dev.skein.e2e.kubelet;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes the API server reachable from pods as {@code https://kubernetes.default.svc} (what in-cluster
 * clients such as the operator use): the API server listens on 127.0.0.1 of the host only, so this
 * forwards TCP from the bridge address ({@link PodNetwork#GATEWAY}, port 443) to it. TLS passes
 * through untouched; e2e/cluster puts the gateway address in the serving certificate.
 *
 * <p>One virtual thread accepts, two per connection copy bytes. {@link #close()} closes the
 * listener and every connection.
 */
final class ApiServerForwarder implements AutoCloseable {

    static final int PORT = 443;

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();

    private ApiServerForwarder(ServerSocket server, InetSocketAddress target) {
        this.server = server;
        this.target = target;
    }

    /** Listens on the gateway address and forwards to the API server of {@code masterUrl}. */
    static ApiServerForwarder start(String masterUrl) throws IOException {
        URI uri = URI.create(masterUrl);
        InetSocketAddress target = new InetSocketAddress(uri.getHost(), uri.getPort() == -1 ? 443 : uri.getPort());
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getByName(PodNetwork.GATEWAY), PORT));
        ApiServerForwarder forwarder = new ApiServerForwarder(server, target);
        Thread.ofVirtual().name("apiserver-forwarder").start(forwarder::acceptLoop);
        return forwarder;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                upstream.connect(target, 5000);
                open.add(client);
                open.add(upstream);
                Thread.ofVirtual().start(() -> pump(client, upstream));
                Thread.ofVirtual().start(() -> pump(upstream, client));
            } catch (IOException e) {
                if (!server.isClosed()) {
                    System.err.printf("process-kubelet: API server forwarding failed: %s%n", e);
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException closed) {
            // Either side went away: close both below.
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeQuietly(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // Already closed.
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // Already closed.
        }
        open.forEach(this::closeQuietly);
    }
}
