package dev.skein.operator.kafka;

import dev.skein.operator.cluster.PartitionReplicas;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * What the rolling-update gate needs from a running cluster, read with the Admin client in three
 * batched calls (topics, their partitions, their min.insync.replicas) plus the active controller.
 */
public final class ClusterAdmin {
    private final Admin admin;
    private final long timeoutMs;

    public ClusterAdmin(Admin admin, long timeoutMs) {
        this.admin = admin;
        this.timeoutMs = timeoutMs;
    }

    /** Every partition of every topic (internal ones included) with its replicas, ISR and min ISR. */
    public List<PartitionReplicas> partitions() {
        Set<String> names = get(admin.listTopics(new ListTopicsOptions().listInternal(true)).names(), "list topics");
        if (names.isEmpty()) {
            return List.of();
        }
        Map<String, TopicDescription> topics = get(admin.describeTopics(names).allTopicNames(), "describe topics");
        Set<ConfigResource> resources = names.stream().map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n))
                .collect(Collectors.toSet());
        Map<ConfigResource, Config> configs = get(admin.describeConfigs(resources).all(), "describe topic configs");
        List<PartitionReplicas> out = new ArrayList<>();
        for (TopicDescription topic : topics.values()) {
            Config config = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic.name()));
            ConfigEntry minIsr = config == null ? null : config.get("min.insync.replicas");
            int min = minIsr == null || minIsr.value() == null ? 1 : Integer.parseInt(minIsr.value());
            for (TopicPartitionInfo p : topic.partitions()) {
                out.add(new PartitionReplicas(topic.name(), p.partition(), p.replicas().stream().map(Node::id).toList(),
                        p.isr().stream().map(Node::id).toList(), min));
            }
        }
        return out;
    }

    /** The node id of the active controller, if the cluster names one. */
    public OptionalInt activeController() {
        DescribeClusterResult cluster = admin.describeCluster();
        Node controller = get(cluster.controller(), "describe the cluster");
        return controller == null || controller.isEmpty() ? OptionalInt.empty() : OptionalInt.of(controller.id());
    }

    /**
     * Per controller voter, the directory id of its metadata log dir (DescribeQuorum v2), which
     * lives in the broker's first log dir: a new id means the broker started on an empty disk. Voters
     * of a quorum formed before voter keys (the zero id) are left out.
     */
    public Map<Integer, String> voterIncarnations() {
        Map<Integer, String> out = new java.util.TreeMap<>();
        for (org.apache.kafka.clients.admin.QuorumInfo.ReplicaState v : get(admin.describeMetadataQuorum().quorumInfo(),
                "describe the controller quorum").voters()) {
            if (v.replicaDirectoryId() != null && !org.apache.kafka.common.Uuid.ZERO_UUID.equals(v.replicaDirectoryId())) {
                out.put(v.replicaId(), v.replicaDirectoryId().toString());
            }
        }
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
