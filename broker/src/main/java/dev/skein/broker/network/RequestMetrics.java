package dev.skein.broker.network;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Request rate, latency and response bytes per API, and open connections, named after Kafka's metrics. */
public final class RequestMetrics {
    private final Time time;
    private final Map<ApiKeys, Timer> latency = new EnumMap<>(ApiKeys.class);
    private final Map<ApiKeys, Counter> responseBytes = new EnumMap<>(ApiKeys.class);
    private final AtomicInteger connections = new AtomicInteger();

    public RequestMetrics(MeterRegistry registry, Time time, Iterable<ApiKeys> apis) {
        this.time = time;
        for (ApiKeys api : apis) {
            latency.put(api, Timer.builder("kafka.network.request.total.time")
                    .description("Time from request received to response sent")
                    .tag("request", api.name)
                    .publishPercentiles(0.5, 0.99, 0.999)
                    .register(registry));
            responseBytes.put(api, Counter.builder("kafka.network.response.bytes")
                    .baseUnit("bytes")
                    .tag("request", api.name)
                    .register(registry));
        }
        registry.gauge("kafka.network.connection.count", connections);
    }

    long nanoTime() {
        return time.nanoseconds();
    }

    void record(ApiKeys api, long nanos, long bytes) {
        Timer t = latency.get(api);
        if (t != null) {
            t.record(nanos, TimeUnit.NANOSECONDS);
            responseBytes.get(api).increment(bytes);
        }
    }

    void connectionOpened() {
        connections.incrementAndGet();
    }

    void connectionClosed() {
        connections.decrementAndGet();
    }
}
