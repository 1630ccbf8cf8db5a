package dev.skein.operator.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Kafka's replication throttle (KIP-73) as the broker implements it, set and cleared through the
 * Admin API: the rates {@code leader.replication.throttled.rate} and
 * {@code follower.replication.throttled.rate} as the cluster-wide dynamic broker default (resource
 * {@code ""}), and per topic the replicas they apply to, {@code leader.replication.throttled.replicas}
 * (the replicas a catching-up follower may fetch from) and {@code follower.replication.throttled.replicas}
 * (the replicas catching up). Only a replica outside the ISR is ever throttled, so a throttle left
 * on a topic costs an in-sync replica nothing.
 *
 * <p>Stateless: {@link #clear()} finds the topics that carry a throttle by describing them, so an
 * operator restart between set and clear leaves nothing behind. Used by the scale down; meant to
 * be shared with broker replacement.
 */
public final class ReplicationThrottle {
    public static final String LEADER_RATE = "leader.replication.throttled.rate";
    public static final String FOLLOWER_RATE = "follower.replication.throttled.rate";
    public static final String LEADER_REPLICAS = "leader.replication.throttled.replicas";
    public static final String FOLLOWER_REPLICAS = "follower.replication.throttled.replicas";
    private static final ConfigResource CLUSTER_DEFAULT = new ConfigResource(ConfigResource.Type.BROKER, "");

    /** One partition being moved: its replicas now ({@code from}, possible sources) and those it gains ({@code adding}). */
    public record Move(String topic, int partition, List<Integer> from, List<Integer> adding) {
        public Move {
            from = List.copyOf(from);
            adding = List.copyOf(adding);
        }
    }

    private final Admin admin;
    private final long timeoutMs;

    public ReplicationThrottle(Admin admin, long timeoutMs) {
        this.admin = admin;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Throttles these moves at {@code bytesPerSecond} (leader and follower side, every broker): the
     * rates on the cluster default, and the replica lists of each topic, merged with what the topic
     * already lists. Nothing to do for a rate of 0 or less (unthrottled).
     */
    public void set(long bytesPerSecond, Collection<Move> moves) {
        if (bytesPerSecond <= 0 || moves.isEmpty()) {
            return;
        }
        Map<String, Set<String>> leader = new TreeMap<>();
        Map<String, Set<String>> follower = new TreeMap<>();
        for (Move m : moves) {
            m.from().forEach(r -> leader.computeIfAbsent(m.topic(), t -> new TreeSet<>()).add(m.partition() + ":" + r));
            m.adding().forEach(r -> follower.computeIfAbsent(m.topic(), t -> new TreeSet<>()).add(m.partition() + ":" + r));
        }
        Set<String> topics = new TreeSet<>(leader.keySet());
        topics.addAll(follower.keySet());
        Map<ConfigResource, Config> current = get(admin.describeConfigs(topics.stream().map(ReplicationThrottle::topic)
                .toList()).all(), "describe the throttled topics");
        Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
        String rate = Long.toString(bytesPerSecond);
        ops.put(CLUSTER_DEFAULT, List.of(set(LEADER_RATE, rate), set(FOLLOWER_RATE, rate)));
        for (String t : topics) {
            Config config = current.get(topic(t));
            List<AlterConfigOp> topicOps = new ArrayList<>();
            String leaderList = merged(config, LEADER_REPLICAS, leader.getOrDefault(t, Set.of()));
            String followerList = merged(config, FOLLOWER_REPLICAS, follower.getOrDefault(t, Set.of()));
            if (!leaderList.isEmpty()) {
                topicOps.add(set(LEADER_REPLICAS, leaderList));
            }
            if (!followerList.isEmpty()) {
                topicOps.add(set(FOLLOWER_REPLICAS, followerList));
            }
            ops.put(topic(t), topicOps);
        }
        get(admin.incrementalAlterConfigs(ops).all(), "set the replication throttle");
    }

    /** Topics whose config lists throttled replicas (leader or follower side). */
    public Set<String> throttledTopics() {
        Set<String> names = get(admin.listTopics(new ListTopicsOptions().listInternal(true)).names(), "list topics");
        if (names.isEmpty()) {
            return Set.of();
        }
        Map<ConfigResource, Config> configs = get(admin.describeConfigs(names.stream().map(ReplicationThrottle::topic)
                .toList()).all(), "describe topic configs");
        Set<String> out = new TreeSet<>();
        configs.forEach((resource, config) -> {
            if (!value(config, LEADER_REPLICAS).isEmpty() || !value(config, FOLLOWER_REPLICAS).isEmpty()) {
                out.add(resource.name());
            }
        });
        return out;
    }

    /** Whether the cluster-wide default rates are set. */
    public boolean rateSet() {
        Config config = get(admin.describeConfigs(List.of(CLUSTER_DEFAULT)).all(), "describe the broker defaults")
                .get(CLUSTER_DEFAULT);
        return config != null && config.entries().stream().anyMatch(e -> (LEADER_RATE.equals(e.name())
                || FOLLOWER_RATE.equals(e.name())) && e.source() == ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    }

    /**
     * Removes the throttle: the replica lists from every topic that has them and the default
     * rates. Returns the topics it cleared. Idempotent.
     */
    public Set<String> clear() {
        Set<String> topics = throttledTopics();
        Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
        ops.put(CLUSTER_DEFAULT, List.of(delete(LEADER_RATE), delete(FOLLOWER_RATE)));
        for (String t : topics) {
            ops.put(topic(t), List.of(delete(LEADER_REPLICAS), delete(FOLLOWER_REPLICAS)));
        }
        get(admin.incrementalAlterConfigs(ops).all(), "clear the replication throttle");
        return topics;
    }

    private static String merged(Config config, String key, Set<String> add) {
        Set<String> out = new TreeSet<>(add);
        String existing = value(config, key);
        if (existing.trim().equals("*")) {
            return "*";
        }
        for (String e : existing.split(",")) {
            if (!e.isBlank()) {
                out.add(e.trim());
            }
        }
        return out.stream().collect(Collectors.joining(","));
    }

    private static String value(Config config, String key) {
        ConfigEntry e = config == null ? null : config.get(key);
        return e == null || e.value() == null || e.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG
                ? "" : e.value();
    }

    private static ConfigResource topic(String name) {
        return new ConfigResource(ConfigResource.Type.TOPIC, name);
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }

    private static AlterConfigOp delete(String key) {
        return new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE);
    }

    private <T> T get(KafkaFuture<T> future, String what) {
        return KafkaCallException.await(future, timeoutMs, what);
    }
}
