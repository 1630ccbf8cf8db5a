package dev.skein.operator.kafka;

import dev.skein.operator.cluster.PartitionReplicas;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The re-replication throttle of a broker replacement, set and removed with IncrementalAlterConfigs
 * (KIP-73 names): the cluster-wide broker defaults {@code leader.replication.throttled.rate} and
 * {@code follower.replication.throttled.rate}, and per topic the replicas they apply to:
 * {@code follower.replication.throttled.replicas} lists the replaced broker's replicas
 * ({@code partition:broker}), {@code leader.replication.throttled.replicas} the other replicas of
 * those partitions (any of them may lead). The brokers throttle only replicas outside the ISR, so
 * in-sync followers and producers are never slowed.
 */
public final class ReplicationThrottleAdmin {
    public static final String LEADER_RATE = "leader.replication.throttled.rate";
    public static final String FOLLOWER_RATE = "follower.replication.throttled.rate";
    public static final String LEADER_REPLICAS = "leader.replication.throttled.replicas";
    public static final String FOLLOWER_REPLICAS = "follower.replication.throttled.replicas";
    /** The cluster-wide default broker config resource. */
    private static final ConfigResource CLUSTER_DEFAULT = new ConfigResource(ConfigResource.Type.BROKER, "");

    private final Admin admin;
    private final long timeoutMs;

    public ReplicationThrottleAdmin(Admin admin, long timeoutMs) {
        this.admin = admin;
        this.timeoutMs = timeoutMs;
    }

    /** Throttles the re-replication of {@code broker}'s replicas of {@code partitions} to {@code bytesPerSecond}. */
    public void set(int broker, long bytesPerSecond, List<PartitionReplicas> partitions) {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = new LinkedHashMap<>();
        ops.put(CLUSTER_DEFAULT, List.of(
                new AlterConfigOp(new ConfigEntry(LEADER_RATE, Long.toString(bytesPerSecond)), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry(FOLLOWER_RATE, Long.toString(bytesPerSecond)), AlterConfigOp.OpType.SET)));
        topicReplicas(broker, partitions).forEach((topic, lists) -> ops.put(
                new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(
                        new AlterConfigOp(new ConfigEntry(LEADER_REPLICAS, lists.get(0)), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry(FOLLOWER_REPLICAS, lists.get(1)), AlterConfigOp.OpType.SET))));
        get(admin.incrementalAlterConfigs(ops).all(), "set the recovery throttle");
    }

    /**
     * Removes the throttle: both broker rates, and both replica lists from every topic that has
     * one. Reads the topics first, so it also clears a throttle set before an operator restart.
     */
    public void clear() {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = new LinkedHashMap<>();
        ops.put(CLUSTER_DEFAULT, List.of(new AlterConfigOp(new ConfigEntry(LEADER_RATE, ""), AlterConfigOp.OpType.DELETE),
                new AlterConfigOp(new ConfigEntry(FOLLOWER_RATE, ""), AlterConfigOp.OpType.DELETE)));
        Set<String> names = get(admin.listTopics(new ListTopicsOptions().listInternal(true)).names(), "list topics");
        if (!names.isEmpty()) {
            Set<ConfigResource> resources = names.stream().map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n))
                    .collect(Collectors.toSet());
            Map<ConfigResource, Config> configs = get(admin.describeConfigs(resources).all(), "describe topic configs");
            configs.forEach((resource, config) -> {
                List<AlterConfigOp> deletes = new ArrayList<>();
                for (String key : List.of(LEADER_REPLICAS, FOLLOWER_REPLICAS)) {
                    ConfigEntry e = config.get(key);
                    if (e != null && e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                        deletes.add(new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE));
                    }
                }
                if (!deletes.isEmpty()) {
                    ops.put(resource, deletes);
                }
            });
        }
        get(admin.incrementalAlterConfigs(ops).all(), "remove the recovery throttle");
    }

    /**
     * Per topic that {@code broker} hosts: [leader list, follower list]. The follower list names
     * {@code broker}'s replicas, the leader list every other replica of those partitions.
     */
    static Map<String, List<String>> topicReplicas(int broker, List<PartitionReplicas> partitions) {
        Map<String, Set<String>> leader = new TreeMap<>();
        Map<String, Set<String>> follower = new TreeMap<>();
        for (PartitionReplicas p : partitions) {
            if (!p.replicas().contains(broker)) {
                continue;
            }
            follower.computeIfAbsent(p.topic(), t -> new TreeSet<>()).add(p.partition() + ":" + broker);
            Set<String> l = leader.computeIfAbsent(p.topic(), t -> new TreeSet<>());
            p.replicas().stream().filter(r -> r != broker).forEach(r -> l.add(p.partition() + ":" + r));
        }
        Map<String, List<String>> out = new TreeMap<>();
        follower.forEach((topic, f) -> out.put(topic, List.of(String.join(",", leader.get(topic)), String.join(",", f))));
        return out;
    }

    private <T> T get(KafkaFuture<T> future, String what) {
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new KafkaCallException(what, e.getCause());
        } catch (TimeoutException e) {
            throw new KafkaCallException(what, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaCallException(what, e);
        }
    }
}
