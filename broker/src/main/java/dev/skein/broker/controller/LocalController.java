package dev.skein.broker.controller;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.config.DynamicBrokerConfigs;
import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The controller of a single-node cluster: applies admin changes and keeps the metadata in a file
 * of the log dir, replaced atomically (write, fsync, rename) on every change so a crash leaves
 * either the old or the new state. Producer ids are handed out in blocks whose upper bound is
 * persisted before any id of the block is used, so a restart never repeats an id.
 */
public final class LocalController implements Controller {
    private static final Logger log = LoggerFactory.getLogger(LocalController.class);
    private static final String FILE = "metadata.properties";
    private static final long PRODUCER_ID_BLOCK = 1000;
    /** {@code brokerconfig.<resource>/<key>}: a dynamic broker config; resource "" is the cluster default. */
    private static final String BROKER_CONFIG_PREFIX = "brokerconfig.";

    private final Path dir;
    private final String clusterId;
    private final ClusterImage.BrokerInfo self;
    private final CopyOnWriteArrayList<Consumer<ClusterImage>> listeners = new CopyOnWriteArrayList<>();
    private final Map<String, TopicMetadata> topics = new TreeMap<>();
    private final Map<String, Map<String, String>> brokerConfigs = new TreeMap<>();
    private long nextProducerId;
    private long producerIdBlockEnd;
    private volatile ClusterImage image;

    public LocalController(Path dir, String clusterId, ClusterImage.BrokerInfo self) throws IOException {
        this.dir = dir;
        this.clusterId = clusterId;
        this.self = self;
        Files.createDirectories(dir);
        load();
        this.image = buildImage();
    }

    private void load() throws IOException {
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        nextProducerId = Long.parseLong(p.getProperty("producer.id.block.end", "0"));
        producerIdBlockEnd = nextProducerId;
        Map<String, Map<String, String>> byTopic = new HashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith(BROKER_CONFIG_PREFIX)) {
                String rest = key.substring(BROKER_CONFIG_PREFIX.length());
                int slash = rest.indexOf('/');
                brokerConfigs.computeIfAbsent(rest.substring(0, slash), r -> new TreeMap<>())
                        .put(rest.substring(slash + 1), p.getProperty(key));
            }
            if (key.startsWith("topic.")) {
                String rest = key.substring("topic.".length());
                int dot = rest.indexOf('/');
                String topic = rest.substring(0, dot);
                byTopic.computeIfAbsent(topic, t -> new HashMap<>()).put(rest.substring(dot + 1), p.getProperty(key));
            }
        }
        for (Map.Entry<String, Map<String, String>> e : byTopic.entrySet()) {
            Map<String, String> f = e.getValue();
            Map<String, String> configs = new HashMap<>();
            f.forEach((k, v) -> {
                if (k.startsWith("config.")) {
                    configs.put(k.substring("config.".length()), v);
                }
            });
            topics.put(e.getKey(), new TopicMetadata(e.getKey(), Uuid.fromString(f.get("id")),
                    singleReplicaPartitions(Integer.parseInt(f.get("partitions"))), configs));
        }
        log.info("Loaded metadata of {} topic(s) from {}", topics.size(), file);
    }

    private void persist(Map<String, TopicMetadata> newTopics, long newProducerIdBlockEnd) {
        persist(newTopics, newProducerIdBlockEnd, brokerConfigs);
    }

    private void persist(Map<String, TopicMetadata> newTopics, long newProducerIdBlockEnd,
                         Map<String, Map<String, String>> newBrokerConfigs) {
        Properties p = new Properties();
        newBrokerConfigs.forEach((resource, configs) ->
                configs.forEach((k, v) -> p.setProperty(BROKER_CONFIG_PREFIX + resource + "/" + k, v)));
        p.setProperty("cluster.id", clusterId);
        p.setProperty("producer.id.block.end", Long.toString(newProducerIdBlockEnd));
        for (TopicMetadata t : newTopics.values()) {
            String prefix = "topic." + t.name() + "/";
            p.setProperty(prefix + "id", t.id().toString());
            p.setProperty(prefix + "partitions", Integer.toString(t.partitionCount()));
            t.configs().forEach((k, v) -> p.setProperty(prefix + "config." + k, v));
        }
        Path tmp = dir.resolve(FILE + ".tmp");
        try {
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                p.store(w, "Skein cluster metadata (single node); do not edit while the broker runs");
            }
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            } catch (IOException ignored) {
                // directories cannot be opened for fsync on every file system
            }
        } catch (IOException e) {
            throw new KafkaStorageException("Could not write cluster metadata to " + dir + ": " + e.getMessage(), e);
        }
    }

    /** On one broker every partition has this broker as its only replica, leader and ISR. */
    private List<PartitionRegistration> singleReplicaPartitions(int count) {
        return java.util.Collections.nCopies(count, PartitionRegistration.of(List.of(self.id())));
    }

    private ClusterImage buildImage() {
        return new ClusterImage(clusterId, self.id(), List.of(self), new ArrayList<>(topics.values()), brokerConfigs);
    }

    /** Persists {@code newTopics} and publishes the new image. */
    private void commit(Map<String, TopicMetadata> newTopics) {
        persist(newTopics, producerIdBlockEnd);
        topics.clear();
        topics.putAll(newTopics);
        publish();
    }

    private void publish() {
        ClusterImage next = buildImage();
        image = next;
        for (Consumer<ClusterImage> l : listeners) {
            l.accept(next);
        }
    }

    @Override
    public ClusterImage image() {
        return image;
    }

    @Override
    public void addListener(Consumer<ClusterImage> listener) {
        listeners.add(listener);
    }

    /** Images are published under this object's lock, so the current one and the next cannot cross. */
    @Override
    public synchronized void subscribe(Consumer<ClusterImage> listener) {
        listener.accept(image);
        listeners.add(listener);
    }

    @Override
    public synchronized TopicMetadata createTopic(String name, int partitions, short replicationFactor,
                                                  Map<String, String> configs, boolean validateOnly) {
        TopicRules.checkNewTopic(name, topics.keySet(), partitions, replicationFactor, image.brokers().size(), configs);
        TopicMetadata t = new TopicMetadata(name, Uuid.randomUuid(), singleReplicaPartitions(partitions), configs);
        if (!validateOnly) {
            Map<String, TopicMetadata> next = new LinkedHashMap<>(topics);
            next.put(name, t);
            commit(next);
            log.info("Created topic {} ({}) with {} partition(s) and configs {}", name, t.id(), partitions, configs);
        }
        return t;
    }

    /** One node: every replica is this broker, so a manual assignment (checked by the API) places as the count would. */
    @Override
    public synchronized TopicMetadata createTopic(String name, List<List<Integer>> assignment, Map<String, String> configs,
                                                  boolean validateOnly) {
        return createTopic(name, assignment.size(), (short) assignment.getFirst().size(), configs, validateOnly);
    }

    @Override
    public synchronized TopicMetadata createPartitions(String topic, int newCount, List<List<Integer>> newAssignment,
                                                       boolean validateOnly) {
        return createPartitions(topic, newCount, validateOnly);
    }

    @Override
    public synchronized void deleteTopic(Uuid topicId) {
        TopicMetadata t = image.topic(topicId);
        if (t == null) {
            throw new UnknownTopicIdException("Topic id " + topicId + " not found.");
        }
        Map<String, TopicMetadata> next = new LinkedHashMap<>(topics);
        next.remove(t.name());
        commit(next);
        log.info("Deleted topic {} ({})", t.name(), t.id());
    }

    @Override
    public synchronized TopicMetadata createPartitions(String topic, int newCount, boolean validateOnly) {
        TopicMetadata t = TopicRules.checkPartitionIncrease(topics.get(topic), newCount);
        TopicMetadata updated = t.withPartitions(singleReplicaPartitions(newCount));
        if (!validateOnly) {
            Map<String, TopicMetadata> next = new LinkedHashMap<>(topics);
            next.put(topic, updated);
            commit(next);
            log.info("Increased partitions of {} from {} to {}", topic, t.partitionCount(), newCount);
        }
        return updated;
    }

    @Override
    public synchronized TopicMetadata alterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly) {
        TopicMetadata t = topics.get(topic);
        if (t == null) {
            throw new UnknownTopicOrPartitionException("The topic '" + topic + "' does not exist.");
        }
        TopicConfigs.validate(configs);
        TopicMetadata updated = t.withConfigs(configs);
        if (!validateOnly) {
            Map<String, TopicMetadata> next = new LinkedHashMap<>(topics);
            next.put(topic, updated);
            commit(next);
            log.info("Set configs of topic {} to {}", topic, configs);
        }
        return updated;
    }

    @Override
    public synchronized TopicMetadata incrementalAlterTopicConfigs(String topic, List<ConfigOp> ops, boolean validateOnly) {
        TopicMetadata t = topics.get(topic);
        if (t == null) {
            throw new UnknownTopicOrPartitionException("The topic '" + topic + "' does not exist.");
        }
        return alterTopicConfigs(topic, ConfigOp.applyAll(t.configs(), ops), validateOnly);
    }

    @Override
    public synchronized void incrementalAlterBrokerConfigs(String resource, List<ConfigOp> ops, boolean validateOnly) {
        alterBrokerConfigs(resource, ConfigOp.applyAll(brokerConfigs.getOrDefault(resource, Map.of()), ops), validateOnly);
    }

    @Override
    public synchronized void alterBrokerConfigs(String resource, Map<String, String> configs, boolean validateOnly) {
        DynamicBrokerConfigs.validateResource(resource);
        DynamicBrokerConfigs.validate(configs);
        if (validateOnly) {
            return;
        }
        Map<String, Map<String, String>> next = new TreeMap<>(brokerConfigs);
        if (configs.isEmpty()) {
            next.remove(resource);
        } else {
            next.put(resource, new TreeMap<>(configs));
        }
        persist(topics, producerIdBlockEnd, next);
        brokerConfigs.clear();
        brokerConfigs.putAll(next);
        publish();
        log.info("Set dynamic configs of broker resource '{}' to {}", resource, configs);
    }

    @Override
    public synchronized long allocateProducerId() {
        if (nextProducerId >= producerIdBlockEnd) {
            long end = producerIdBlockEnd + PRODUCER_ID_BLOCK;
            persist(topics, end);
            producerIdBlockEnd = end;
        }
        return nextProducerId++;
    }

    @Override
    public long registerBroker(ClusterImage.BrokerInfo broker) {
        if (broker.id() != self.id()) {
            throw new org.apache.kafka.common.errors.InvalidRequestException("A single-node cluster has broker "
                    + self.id() + " only, not " + broker.id());
        }
        return 0;
    }

    @Override
    public BrokerHeartbeat heartbeat(int brokerId, long brokerEpoch, boolean wantShutdown) {
        return new BrokerHeartbeat(false, true);
    }

    /** On one broker the ISR is the broker itself and cannot change. */
    @Override
    public PartitionRegistration alterPartition(org.apache.kafka.common.TopicPartition partition, int leaderId,
                                                int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
        TopicMetadata t = topics.get(partition.topic());
        PartitionRegistration current = t == null ? null : t.partition(partition.partition());
        if (current == null) {
            throw new UnknownTopicOrPartitionException("Unknown partition " + partition);
        }
        if (!newIsr.equals(current.isr())) {
            throw new org.apache.kafka.common.errors.InvalidRequestException("The ISR of a single-node partition is "
                    + current.isr());
        }
        return current;
    }

    /** On one broker the only assignment is the broker itself: accepted as a no-op, anything else refused. */
    @Override
    public void alterPartitionReassignment(TopicPartition partition, List<Integer> targetReplicas) {
        existing(partition);
        if (targetReplicas == null) {
            throw new NoReassignmentInProgressException("No reassignment of " + partition + " is in progress.");
        }
        if (targetReplicas.isEmpty()) {
            throw new InvalidReplicaAssignmentException("The replica assignment of " + partition + " is empty.");
        }
        for (int b : targetReplicas) {
            if (b != self.id()) {
                throw new InvalidReplicaAssignmentException("Broker " + b + " in the replica assignment " + targetReplicas
                        + " of " + partition + " is not a registered broker (this single-node cluster has broker "
                        + self.id() + " only).");
            }
        }
        if (targetReplicas.size() > 1) {
            throw new InvalidReplicaAssignmentException("Broker " + self.id() + " appears more than once in the replica "
                    + "assignment " + targetReplicas + " of " + partition + ".");
        }
    }

    /** On one broker the only replica always leads. */
    @Override
    public void electLeader(ElectionType type, TopicPartition partition) {
        existing(partition);
        throw new ElectionNotNeededException("Broker " + self.id() + ", the only replica of " + partition
                + ", leads it already.");
    }

    private synchronized PartitionRegistration existing(TopicPartition partition) {
        TopicMetadata t = topics.get(partition.topic());
        PartitionRegistration p = t == null ? null : t.partition(partition.partition());
        if (p == null) {
            throw new UnknownTopicOrPartitionException("Unknown partition " + partition);
        }
        return p;
    }

    @Override
    public void close() {
        listeners.clear();
    }
}
