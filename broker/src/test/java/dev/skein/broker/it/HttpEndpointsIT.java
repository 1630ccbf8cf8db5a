package dev.skein.broker.it;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The broker's HTTP port: probes for Kubernetes and the Prometheus scrape. */
class HttpEndpointsIT {
    private static TestBroker broker;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.httpPort() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void probesAnswerWhenTheBrokerServes() throws Exception {
        assertThat(get("/healthz").statusCode()).isEqualTo(200);
        HttpResponse<String> ready = get("/readyz");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).contains("ready");
    }

    @Test
    void metricsShowRequestLatencyBytesInAndLogSize() throws Exception {
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            producer.send(new ProducerRecord<>("metered", 0, "k", "v".repeat(100))).get();
        }
        String body = get("/metrics").body();
        assertThat(body).contains("kafka_network_request_total_time_seconds_count{request=\"Produce\"}");
        assertThat(body).containsPattern("kafka_network_request_total_time_seconds\\{request=\"Produce\",quantile=\"0.99\"}");
        assertThat(body).containsPattern("kafka_server_brokertopicmetrics_bytes_in_total\\{topic=\"metered\"} [1-9]");
        assertThat(body).containsPattern("kafka_log_size_bytes\\{partition=\"0\",topic=\"metered\"} [1-9]");
        assertThat(body).contains("kafka_network_connection_count");
    }
}
