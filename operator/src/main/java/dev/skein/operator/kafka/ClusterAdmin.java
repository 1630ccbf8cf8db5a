package dev.skein.operator.kafka;

import dev.skein.operator.cluster.PartitionReplicas;
import dev.skein.operator.cluster.ScaleDownPlan;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.clients.admin.QuorumInfo;
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
import java.util.HashMap;
import java.util.Optional;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What the rolling-update gate and the scale down need from a running cluster, read with the Admin
 * client in batched calls (topics, their partitions, their min.insync.replicas; reassignments in
 * flight; racks) plus the active controller, and the reassignments a scale down starts.
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

    /** The partition reassignments in flight, with the replicas each is removing. */
    public List<ScaleDownPlan.InFlight> reassignmentsInFlight() {
        Map<TopicPartition, PartitionReassignment> inFlight = get(admin.listPartitionReassignments().reassignments(),
                "list partition reassignments");
        List<ScaleDownPlan.InFlight> out = new ArrayList<>();
        inFlight.forEach((tp, r) -> out.add(new ScaleDownPlan.InFlight(tp.topic(), tp.partition(), r.removingReplicas())));
        return out;
    }

    /** The rack of each live broker that has one. */
    public Map<Integer, String> racks() {
        Map<Integer, String> out = new HashMap<>();
        for (Node n : get(admin.describeCluster().nodes(), "describe the cluster")) {
            if (n.rack() != null) {
                out.put(n.id(), n.rack());
            }
        }
        return out;
    }

    /** Starts these reassignments (new replica list per partition). */
    public void reassign(Map<PartitionReplicas, List<Integer>> moves) {
        Map<TopicPartition, Optional<NewPartitionReassignment>> request = new HashMap<>();
        moves.forEach((p, rs) -> request.put(new TopicPartition(p.topic(), p.partition()),
                Optional.of(new NewPartitionReassignment(rs))));
        get(admin.alterPartitionReassignments(request).all(), "reassign " + moves.size() + " partitions");
    }

    /**
     * Each node's directory id as DescribeQuorum reports it: a voter's metadata log dir, another
     * broker's log dir (its incarnation); both change when a broker starts on an empty disk. A
     * broker that is not a voter answers without the voters' directory ids, so those may be missing.
     * Empty when the cluster does not answer DescribeQuorum: the incarnation is optional in the status.
     */
    public Map<Integer, String> incarnations() {
        QuorumInfo quorum;
        try {
            quorum = get(admin.describeMetadataQuorum().quorumInfo(), "describe the metadata quorum");
        } catch (KafkaCallException e) {
            return Map.of();
        }
        Map<Integer, String> out = new HashMap<>();
        for (List<QuorumInfo.ReplicaState> states : List.of(quorum.voters(), quorum.observers())) {
            for (QuorumInfo.ReplicaState r : states) {
                if (r.replicaDirectoryId() != null && !Uuid.ZERO_UUID.equals(r.replicaDirectoryId())) {
                    out.put(r.replicaId(), r.replicaDirectoryId().toString());
                }
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

    private <T> T get(KafkaFuture<T> future, String what) {
        return KafkaCallException.await(future, timeoutMs, what);
    }
}
