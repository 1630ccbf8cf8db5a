package dev.skein.operator.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/** The operator's HTTP port: {@code /metrics} (Prometheus text format) and {@code /healthz}. */
public final class OperatorHttp implements AutoCloseable {
    private final HttpServer server;

    /** Binds {@code port} on every interface (0: a free port) and starts serving. */
    public OperatorHttp(int port, PrometheusMeterRegistry registry) throws IOException {
        server = HttpServer.create(new InetSocketAddress(port), 16);
        server.createContext("/metrics", ex -> respond(ex, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.createContext("/healthz", ex -> respond(ex, "text/plain", "ok\n"));
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "skein-operator-http");
            t.setDaemon(true);
            return t;
        }));
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange ex, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
