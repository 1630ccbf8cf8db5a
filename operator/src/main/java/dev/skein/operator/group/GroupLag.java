package dev.skein.operator.group;

import dev.skein.operator.model.PartitionLag;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** The lag of a consumer group: per partition, log end offset minus committed offset (never below 0). */
public final class GroupLag {
    private GroupLag() {
    }

    /** One entry per committed partition, sorted by topic and partition; a partition without a known end has no lag. */
    public static List<PartitionLag> of(Map<TopicPartition, Long> committed, Map<TopicPartition, Long> logEnd) {
        List<PartitionLag> out = new ArrayList<>();
        committed.entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<TopicPartition, Long> e) -> e.getKey().topic())
                        .thenComparing(e -> e.getKey().partition()))
                .forEach(e -> {
                    PartitionLag lag = new PartitionLag();
                    lag.setTopic(e.getKey().topic());
                    lag.setPartition(e.getKey().partition());
                    lag.setCommittedOffset(e.getValue());
                    Long end = logEnd.get(e.getKey());
                    lag.setLogEndOffset(end);
                    lag.setLag(end == null ? null : Math.max(0, end - e.getValue()));
                    out.add(lag);
                });
        return out;
    }

    public static long total(List<PartitionLag> lags) {
        return lags.stream().mapToLong(l -> l.getLag() == null ? 0 : l.getLag()).sum();
    }
}
