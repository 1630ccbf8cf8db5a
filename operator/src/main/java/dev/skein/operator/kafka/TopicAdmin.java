package dev.skein.operator.kafka;

import dev.skein.operator.topic.ActualTopic;
import dev.skein.operator.topic.ConfigChange;
import dev.skein.operator.topic.DesiredTopic;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The Admin calls the topic reconciler makes, each bounded by the admin timeout; Kafka's errors
 * come out as {@link KafkaCallException} with the cause's message.
 */
public final class TopicAdmin {
    private final Admin admin;
    private final TopicBatches batches;
    private final long timeoutMs;

    /** @param batches the describe and create calls this reconcile shares with concurrent ones */
    public TopicAdmin(Admin admin, TopicBatches batches, long timeoutMs) {
        this.admin = admin;
        this.batches = batches;
        this.timeoutMs = timeoutMs;
    }

    /** Node ids of the cluster's brokers, sorted. */
    public List<Integer> brokerIds() {
        return get(admin.describeCluster().nodes(), "describe the cluster").stream()
                .map(Node::id).sorted().toList();
    }

    /** The topic with its replicas, ISR and topic-level configs, or empty if it does not exist. */
    public Optional<ActualTopic> describe(String name) {
        TopicDescription d;
        try {
            d = batches.describe(name).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw new KafkaCallException("describe topic " + name, e.getCause());
        } catch (TimeoutException e) {
            throw new KafkaCallException("describe topic " + name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaCallException("describe topic " + name, e);
        }
        SortedMap<Integer, List<Integer>> replicas = new TreeMap<>();
        SortedMap<Integer, List<Integer>> isr = new TreeMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            replicas.put(p.partition(), p.replicas().stream().map(Node::id).toList());
            isr.put(p.partition(), p.isr().stream().map(Node::id).toList());
        }
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
        Config config;
        try {
            config = get(batches.configs(name), "describe configs of " + name);
        } catch (KafkaCallException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                // the broker that answered DescribeTopics knows the new topic, the one asked for configs not yet
                throw new TopicNotVisibleException(name, e);
            }
            throw e;
        }
        Map<String, String> topicConfigs = config == null ? Map.of() : config.entries().stream()
                .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && e.value() != null)
                .collect(Collectors.toMap(ConfigEntry::name, ConfigEntry::value));
        String id = d.topicId() == null ? null : d.topicId().toString();
        return Optional.of(new ActualTopic(name, id, replicas, isr, topicConfigs));
    }

    public void create(DesiredTopic topic) {
        NewTopic newTopic = new NewTopic(topic.name(), topic.partitions(), (short) topic.replicationFactor())
                .configs(topic.configs());
        get(batches.create(newTopic), "create topic " + topic.name());
    }

    public void increasePartitions(String name, int count) {
        get(admin.createPartitions(Map.of(name, NewPartitions.increaseTo(count))).all(),
                "increase the partitions of " + name + " to " + count);
    }

    public void alterConfigs(String name, List<ConfigChange> changes) {
        List<AlterConfigOp> ops = changes.stream().map(c -> new AlterConfigOp(new ConfigEntry(c.key(), c.value()),
                c.op() == ConfigChange.Op.SET ? AlterConfigOp.OpType.SET : AlterConfigOp.OpType.DELETE)).toList();
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
        get(admin.incrementalAlterConfigs(Map.of(resource, ops)).all(), "alter the configs of " + name);
    }

    public void reassign(String name, SortedMap<Integer, List<Integer>> replicas) {
        Map<TopicPartition, Optional<NewPartitionReassignment>> request = new HashMap<>();
        replicas.forEach((p, rs) -> request.put(new TopicPartition(name, p), Optional.of(new NewPartitionReassignment(rs))));
        get(admin.alterPartitionReassignments(request).all(), "reassign the replicas of " + name);
    }

    /** Whether any partition of the topic is being reassigned. */
    public boolean reassignmentInProgress(String name) {
        return get(admin.listPartitionReassignments().reassignments(), "list partition reassignments")
                .keySet().stream().anyMatch(tp -> tp.topic().equals(name));
    }

    public void delete(String name) {
        get(admin.deleteTopics(Set.of(name)).all(), "delete topic " + name);
    }

    private <T> T get(java.util.concurrent.Future<T> future, String what) {
        return KafkaCallException.await(future, timeoutMs, what);
    }
}
