package dev.skein.operator.topic;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/** What to do to bring a topic in line with its SkeinTopic: the output of {@link TopicDiff}. */
public sealed interface TopicPlan {

    /** Create the topic with the desired partitions, replication factor and configs. */
    record Create(DesiredTopic topic) implements TopicPlan {
    }

    /**
     * Change an existing topic: any of a partition increase ({@code newPartitionCount > 0}), a
     * replica reassignment (replication factor change; new replica list per partition), config
     * changes. Adopting a matching topic is an update with nothing to change.
     */
    record Update(int newPartitionCount, SortedMap<Integer, List<Integer>> reassignment,
                  List<ConfigChange> configChanges) implements TopicPlan {
        public Update {
            reassignment = new java.util.TreeMap<>(reassignment);
            configChanges = List.copyOf(configChanges);
        }

        public boolean isEmpty() {
            return newPartitionCount == 0 && reassignment.isEmpty() && configChanges.isEmpty();
        }
    }

    /** Leave the topic as it is and report why on the Ready condition. */
    record Refuse(TopicReason reason, String message) implements TopicPlan {
    }

    static Update nothing() {
        return new Update(0, new java.util.TreeMap<>(Map.of()), List.of());
    }
}
