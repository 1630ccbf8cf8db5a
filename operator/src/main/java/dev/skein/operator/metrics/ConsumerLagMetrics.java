package dev.skein.operator.metrics;

import dev.skein.operator.model.PartitionLag;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Consumer lag of every SkeinConsumerGroup as Prometheus gauges: {@code skein_consumer_group_lag}
 * per partition and {@code skein_consumer_group_total_lag} per group (not "..._total": Prometheus
 * keeps that suffix for counters), tagged with the resource's namespace, the group id and the
 * partition. Partitions the group no longer has are removed.
 */
public final class ConsumerLagMetrics {
    private static final String LAG = "skein.consumer.group.lag";
    private static final String TOTAL = "skein.consumer.group.total.lag";

    private final MeterRegistry registry;
    private final Map<Tags, AtomicLong> values = new ConcurrentHashMap<>();
    private final Map<String, Set<Tags>> byGroup = new ConcurrentHashMap<>();

    public ConsumerLagMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Records the group's lag as just read. */
    public synchronized void update(String namespace, String groupId, List<PartitionLag> lags, long total) {
        String key = namespace + "/" + groupId;
        Set<Tags> now = new HashSet<>();
        Tags groupTags = Tags.of("namespace", namespace, "group", groupId);
        set(TOTAL, groupTags, total);
        now.add(groupTags.and("metric", TOTAL));
        for (PartitionLag lag : lags) {
            Tags tags = groupTags.and("topic", lag.getTopic(), "partition", Integer.toString(lag.getPartition()));
            set(LAG, tags, lag.getLag() == null ? 0 : lag.getLag());
            now.add(tags.and("metric", LAG));
        }
        Set<Tags> before = byGroup.getOrDefault(key, Set.of());
        before.stream().filter(t -> !now.contains(t)).forEach(this::remove);
        byGroup.put(key, now);
    }

    /** Forgets a group (its resource was deleted). */
    public synchronized void remove(String namespace, String groupId) {
        Set<Tags> gone = byGroup.remove(namespace + "/" + groupId);
        if (gone != null) {
            gone.forEach(this::remove);
        }
    }

    private void set(String name, Tags tags, long value) {
        values.computeIfAbsent(tags.and("metric", name), t -> {
            AtomicLong holder = new AtomicLong();
            Gauge.builder(name, holder, AtomicLong::get).description(name.equals(LAG)
                    ? "Log end offset minus the group's committed offset" : "Sum of the group's lag")
                    .tags(tags).register(registry);
            return holder;
        }).set(value);
    }

    private void remove(Tags withMetric) {
        values.remove(withMetric);
        String name = withMetric.stream().filter(t -> t.getKey().equals("metric")).findFirst().orElseThrow().getValue();
        Tags tags = Tags.of(withMetric.stream().filter(t -> !t.getKey().equals("metric")).toList());
        var gauge = registry.find(name).tags(tags).gauge();
        if (gauge != null) {
            registry.remove(gauge);
        }
    }
}
