package dev.skein.operator.metrics;

import dev.skein.operator.model.PartitionLag;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ConsumerLagMetricsTest {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ConsumerLagMetrics metrics = new ConsumerLagMetrics(registry);

    private static PartitionLag lag(String topic, int partition, long lag) {
        PartitionLag l = new PartitionLag();
        l.setTopic(topic);
        l.setPartition(partition);
        l.setLag(lag);
        return l;
    }

    private List<String> lines() {
        return registry.scrape().lines().filter(l -> l.startsWith("skein_consumer_group")).toList();
    }

    @Test
    void lagIsExportedPerPartitionAndPerGroupAndFollowsUpdates() {
        metrics.update("shop", "readers", List.of(lag("orders", 0, 40), lag("orders", 1, 2)), 42);
        metrics.update("shop", "readers", List.of(lag("orders", 0, 5), lag("orders", 1, 0)), 5);

        assertThat(lines()).contains(
                "skein_consumer_group_lag{group=\"readers\",namespace=\"shop\",partition=\"0\",topic=\"orders\"} 5.0",
                "skein_consumer_group_lag{group=\"readers\",namespace=\"shop\",partition=\"1\",topic=\"orders\"} 0.0",
                "skein_consumer_group_total_lag{group=\"readers\",namespace=\"shop\"} 5.0");
    }

    @Test
    void partitionsNoLongerCommittedAndDeletedGroupsDisappear() {
        metrics.update("shop", "readers", List.of(lag("orders", 0, 1), lag("returns", 0, 3)), 4);
        metrics.update("shop", "writers", List.of(lag("orders", 0, 7)), 7);

        metrics.update("shop", "readers", List.of(lag("orders", 0, 1)), 1);
        metrics.remove("shop", "writers");

        assertThat(lines()).noneMatch(l -> l.contains("returns")).noneMatch(l -> l.contains("writers"))
                .anyMatch(l -> l.contains("group=\"readers\"") && l.contains("topic=\"orders\""));
    }
}
