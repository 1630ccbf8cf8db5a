package dev.skein.broker.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The broker's HTTP port: {@code /metrics} (Prometheus text format), {@code /healthz} (the process
 * is up) and {@code /readyz} (the broker serves Kafka requests), for Kubernetes probes and scrapes.
 */
public final class HttpEndpoints implements AutoCloseable {
    private final HttpServer server;

    public HttpEndpoints(String host, int port, PrometheusMeterRegistry registry, BooleanSupplier ready) throws IOException {
        InetSocketAddress address = host == null || host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
        server = HttpServer.create(address, 16);
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "skein-http");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/metrics", ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.createContext("/healthz", ex -> respond(ex, 200, "text/plain", "ok\n"));
        server.createContext("/readyz", ex -> {
            boolean ok = ready.getAsBoolean();
            respond(ex, ok ? 200 : 503, "text/plain", ok ? "ready\n" : "starting\n");
        });
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange ex, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
