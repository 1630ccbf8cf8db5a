package dev.skein.broker.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Reads a broker's Prometheus {@code /metrics} over HTTP. */
final class BrokerMetrics {
    private BrokerMetrics() {
    }

    /** The value of the series {@code name} (without labels) on the broker with this HTTP port. */
    static double value(int httpPort, String name) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + httpPort + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        for (String line : r.body().split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError("no series " + name + " in the /metrics of the broker on HTTP port " + httpPort);
    }
}
