package dev.skein.operator.group;

import dev.skein.operator.cluster.BrokerConfigMap;
import dev.skein.operator.model.OffsetReset;
import dev.skein.operator.model.PartitionOffset;
import org.apache.kafka.common.TopicPartition;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Whether to apply a SkeinConsumerGroup's {@code spec.offsetReset} now, and to which partitions.
 * Pure. A reset is applied once per change of the field (its fingerprint is kept in the status)
 * and only while the group has no active members, as Kafka's own tools require.
 *
 * <pre>
 *  spec.offsetReset   fingerprint vs status   active members   decision
 *  absent             -                       -                None
 *  present            equal                   -                None (already applied)
 *  present            different               &gt; 0              Wait (WaitingForInactiveGroup)
 *  present            different               0                Apply
 * </pre>
 */
public final class OffsetResetDecision {
    /** What to do about the reset. */
    public sealed interface Decision {
    }

    public record None() implements Decision {
    }

    public record Wait(String message) implements Decision {
    }

    public record Apply(String fingerprint) implements Decision {
    }

    private OffsetResetDecision() {
    }

    public static Decision decide(OffsetReset reset, String appliedFingerprint, int activeMembers) {
        if (reset == null) {
            return new None();
        }
        String fingerprint = fingerprint(reset);
        if (fingerprint.equals(appliedFingerprint)) {
            return new None();
        }
        if (activeMembers > 0) {
            return new Wait("the group has " + activeMembers + " active member(s); the offset reset waits until "
                    + "it has none");
        }
        return new Apply(fingerprint);
    }

    /** A stable fingerprint of the reset's content. */
    public static String fingerprint(OffsetReset reset) {
        StringBuilder s = new StringBuilder().append(reset.getTo()).append('|').append(reset.getTimestamp()).append('|');
        new TreeSet<>(reset.getTopics() == null ? List.of() : reset.getTopics()).forEach(t -> s.append(t).append(','));
        s.append('|');
        (reset.getOffsets() == null ? List.<PartitionOffset>of() : reset.getOffsets()).stream()
                .map(o -> o.getTopic() + "-" + o.getPartition() + "=" + o.getOffset()).sorted()
                .forEach(o -> s.append(o).append(','));
        return BrokerConfigMap.hash(s.toString());
    }

    /**
     * The partitions an Earliest/Latest/Timestamp reset moves: every partition of the listed topics,
     * or, with no topic listed, every partition the group has committed offsets for.
     */
    public static Set<TopicPartition> partitions(OffsetReset reset, Collection<TopicPartition> committed,
                                                 Map<String, Integer> partitionCounts) {
        Set<TopicPartition> out = new TreeSet<>(java.util.Comparator.comparing(TopicPartition::topic)
                .thenComparing(TopicPartition::partition));
        List<String> topics = reset.getTopics() == null ? List.of() : reset.getTopics();
        if (topics.isEmpty()) {
            out.addAll(committed);
            return out;
        }
        for (String topic : topics) {
            int count = partitionCounts.getOrDefault(topic, 0);
            for (int p = 0; p < count; p++) {
                out.add(new TopicPartition(topic, p));
            }
        }
        return out;
    }
}
