package dev.skein.operator.topic;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Decides what to do to a topic, from the spec and the cluster's view of it. Pure: no I/O, no clock.
 *
 * <p>Decision table (first matching row wins):
 * <pre>
 *  spec vs cluster                                       plan
 *  replicationFactor &gt; brokers                            Refuse InvalidSpec
 *  min.insync.replicas &gt; replicationFactor                Refuse InvalidSpec
 *  topic absent                                           Create
 *  topic present, not yet managed, differs from spec      Refuse ExistingTopicMismatch (adopt only a match)
 *  topic present, not yet managed, matches                Update (empty): adopt
 *  partitions below the cluster's                         Refuse NotSupported (nothing else applied either)
 *  otherwise                                              Update: partition increase, reassignment to the
 *                                                         new replication factor, config SET/DELETE
 * </pre>
 * Configs: every key of the desired configs whose value differs is SET; a key set on the topic but
 * not in the spec is DELETEd (back to the cluster default), so the spec is the whole truth, except
 * for the {@code *.replication.throttled.replicas} keys, which the SkeinCluster reconciler sets while a
 * replaced broker catches up ({@link #RECOVERY_THROTTLE_KEYS}) and removes afterwards.
 */
public final class TopicDiff {
    /** Topic configs owned by the cluster's node-loss recovery: never DELETEd for not being in the spec. */
    public static final java.util.Set<String> RECOVERY_THROTTLE_KEYS = java.util.Set.of(
            "leader.replication.throttled.replicas", "follower.replication.throttled.replicas");

    private TopicDiff() {
    }

    /**
     * @param desired  what the resource asks for
     * @param actual   the topic in the cluster, if it exists
     * @param managed  whether this resource already manages the topic (its status has the topic's id);
     *                 an unmanaged existing topic is adopted only if it matches
     * @param brokers  ids of the cluster's brokers
     */
    public static TopicPlan plan(DesiredTopic desired, Optional<ActualTopic> actual, boolean managed,
                                 List<Integer> brokers) {
        if (desired.replicationFactor() > brokers.size()) {
            return new TopicPlan.Refuse(TopicReason.InvalidSpec, String.format(
                    "spec.replicationFactor %d exceeds the cluster's %d broker(s)",
                    desired.replicationFactor(), brokers.size()));
        }
        String minIsr = desired.configs().get(DesiredTopic.MIN_INSYNC_REPLICAS);
        if (minIsr != null && Integer.parseInt(minIsr) > desired.replicationFactor()) {
            return new TopicPlan.Refuse(TopicReason.InvalidSpec, String.format(
                    "spec.minInSyncReplicas %s exceeds spec.replicationFactor %d", minIsr, desired.replicationFactor()));
        }
        if (actual.isEmpty()) {
            return new TopicPlan.Create(desired);
        }
        ActualTopic topic = actual.get();
        List<ConfigChange> configChanges = configChanges(desired.configs(), topic.configs());
        if (!managed) {
            List<String> differences = new ArrayList<>();
            if (topic.partitions() != desired.partitions()) {
                differences.add("partitions " + topic.partitions() + " (spec " + desired.partitions() + ")");
            }
            if (topic.replicationFactor() != desired.replicationFactor()) {
                differences.add("replication factor " + topic.replicationFactor()
                        + " (spec " + desired.replicationFactor() + ")");
            }
            for (ConfigChange c : configChanges) {
                differences.add(c.op() == ConfigChange.Op.SET
                        ? c.key() + "=" + topic.configs().getOrDefault(c.key(), "<default>") + " (spec " + c.value() + ")"
                        : c.key() + "=" + topic.configs().get(c.key()) + " (not in spec)");
            }
            if (!differences.isEmpty()) {
                return new TopicPlan.Refuse(TopicReason.ExistingTopicMismatch, "topic " + desired.name()
                        + " already exists and differs from the spec, so it is not adopted: "
                        + String.join(", ", differences));
            }
            return TopicPlan.nothing();
        }
        if (desired.partitions() < topic.partitions()) {
            return new TopicPlan.Refuse(TopicReason.NotSupported, String.format(
                    "spec.partitions %d is below the topic's %d partitions: Kafka cannot remove partitions "
                            + "(nothing was applied; delete and recreate the topic to shrink it)",
                    desired.partitions(), topic.partitions()));
        }
        int newPartitionCount = desired.partitions() > topic.partitions() ? desired.partitions() : 0;
        SortedMap<Integer, List<Integer>> reassignment = reassignment(topic.replicas(), desired.replicationFactor(), brokers);
        return new TopicPlan.Update(newPartitionCount, reassignment, configChanges);
    }

    /** SET for each desired key whose value differs, DELETE for each topic-level key the spec no longer has. */
    static List<ConfigChange> configChanges(Map<String, String> desired, Map<String, String> actual) {
        List<ConfigChange> out = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(desired).entrySet()) {
            if (!e.getValue().equals(actual.get(e.getKey()))) {
                out.add(ConfigChange.set(e.getKey(), e.getValue()));
            }
        }
        for (String key : new TreeSet<>(actual.keySet())) {
            if (!desired.containsKey(key) && !RECOVERY_THROTTLE_KEYS.contains(key)) {
                out.add(ConfigChange.delete(key));
            }
        }
        return out;
    }

    /**
     * The new replica list of each partition whose replica count differs from {@code rf}: a partition
     * with too many replicas keeps its first {@code rf} (the preferred leader stays first); one with
     * too few gets the brokers holding the fewest replicas of this topic added at its end (on a tie,
     * the first broker after the partition's leader in id order, as Kafka's round robin), so the result is deterministic and balanced. Partitions already at {@code rf} are
     * not listed.
     */
    static SortedMap<Integer, List<Integer>> reassignment(SortedMap<Integer, List<Integer>> replicas, int rf,
                                                          List<Integer> brokers) {
        Map<Integer, Integer> load = new HashMap<>();
        brokers.forEach(b -> load.put(b, 0));
        replicas.values().forEach(rs -> rs.forEach(b -> load.merge(b, 1, Integer::sum)));
        List<Integer> sorted = brokers.stream().sorted().toList();
        SortedMap<Integer, List<Integer>> out = new TreeMap<>();
        for (Map.Entry<Integer, List<Integer>> e : replicas.entrySet()) {
            List<Integer> current = e.getValue();
            if (current.size() == rf) {
                continue;
            }
            List<Integer> target = new ArrayList<>(current.subList(0, Math.min(rf, current.size())));
            current.subList(target.size(), current.size()).forEach(b -> load.merge(b, -1, Integer::sum));
            int first = sorted.indexOf(target.get(0));
            while (target.size() < rf) {
                Integer next = sorted.stream().filter(b -> !target.contains(b))
                        .min(Comparator.comparing((Integer b) -> load.get(b))
                                .thenComparing(b -> Math.floorMod(sorted.indexOf(b) - first - 1, sorted.size())))
                        .orElseThrow(() -> new IllegalArgumentException(
                                "replication factor " + rf + " exceeds the " + brokers.size() + " brokers"));
                target.add(next);
                load.merge(next, 1, Integer::sum);
            }
            out.put(e.getKey(), List.copyOf(target));
        }
        return out;
    }
}
