package dev.skein.broker.it;

import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.controller.BrokerHeartbeat;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.metadata.Topics;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.IneligibleReplicaException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * A test double for the controller quorum, shared by the brokers of one JVM: holds brokers and
 * topics in memory, places replicas round-robin over the registered brokers, applies ISR changes
 * by compare-and-set, and lets a test fence a broker (out of every ISR; partitions it led get a new
 * leader from the ISR, or none). Every change is published to every broker's listeners in order,
 * synchronously, under the lock. Each broker talks to it through {@link #forBroker}; closing that
 * view only detaches the broker's listeners, as a stopped broker stops hearing metadata.
 */
public final class SharedTestController {
    private final Map<String, Map<String, String>> brokerConfigs = new java.util.TreeMap<>();
    private final String clusterId;
    private final Map<Integer, ClusterImage.BrokerInfo> brokers = new TreeMap<>();
    private final Map<String, TopicMetadata> topics = new TreeMap<>();
    private final Map<Integer, List<Consumer<ClusterImage>>> listeners = new TreeMap<>();
    private long nextProducerId;
    private long brokerEpoch;
    private volatile ClusterImage image;

    /** Pre-creates the offsets topic on every one of {@code brokerIds}, so each broker can load group state. */
    public SharedTestController(String clusterId, List<Integer> brokerIds, int offsetsPartitions) {
        this.clusterId = clusterId;
        List<PartitionRegistration> parts = new ArrayList<>();
        for (int p = 0; p < offsetsPartitions; p++) {
            parts.add(PartitionRegistration.of(brokerIds));
        }
        topics.put(Topics.GROUP_METADATA_TOPIC, new TopicMetadata(Topics.GROUP_METADATA_TOPIC, Uuid.randomUuid(), parts,
                Map.of("cleanup.policy", "compact")));
        image = build();
    }

    public ClusterImage image() {
        return image;
    }

    public PartitionRegistration partition(TopicPartition tp) {
        TopicMetadata t = image.topic(tp.topic());
        return t == null ? null : t.partition(tp.partition());
    }

    /** The view a broker is constructed with: registers the broker (unfenced) on creation. */
    public synchronized Controller forBroker(ClusterImage.BrokerInfo self) {
        View v = new View(self.id());
        registerBroker(self);
        return v;
    }

    /** The broker's session expired (or it was isolated): out of every ISR, its leaderships move. */
    public synchronized void fence(int brokerId) {
        ClusterImage.BrokerInfo b = brokers.get(brokerId);
        brokers.put(brokerId, new ClusterImage.BrokerInfo(b.id(), b.host(), b.port(), b.rack(), b.incarnation(), true));
        for (TopicMetadata t : List.copyOf(topics.values())) {
            TopicMetadata next = t;
            for (int p = 0; p < t.partitionCount(); p++) {
                PartitionRegistration r = t.partition(p);
                List<Integer> isr = new ArrayList<>(r.isr());
                if (isr.size() > 1) {
                    isr.remove(Integer.valueOf(brokerId));
                }
                if (r.leader() == brokerId) {
                    int leader = isr.stream().filter(this::unfenced).findFirst().orElse(PartitionRegistration.NO_LEADER);
                    next = next.withPartition(p, r.withLeader(leader, isr));
                } else if (!isr.equals(r.isr())) {
                    next = next.withPartition(p, r.withIsr(isr));
                }
            }
            topics.put(t.name(), next);
        }
        publish();
    }

    /** The broker is back: unfenced, and leader of the partitions left leaderless that it is in sync for. */
    public synchronized void unfence(int brokerId) {
        ClusterImage.BrokerInfo b = brokers.get(brokerId);
        brokers.put(brokerId, new ClusterImage.BrokerInfo(b.id(), b.host(), b.port(), b.rack(), b.incarnation(), false));
        electLeaderless();
        publish();
    }

    private boolean unfenced(int id) {
        ClusterImage.BrokerInfo b = brokers.get(id);
        return b != null && !b.fenced();
    }

    private void electLeaderless() {
        for (TopicMetadata t : List.copyOf(topics.values())) {
            TopicMetadata next = t;
            for (int p = 0; p < t.partitionCount(); p++) {
                PartitionRegistration r = t.partition(p);
                if (!r.hasLeader()) {
                    for (int candidate : r.isr()) {
                        if (unfenced(candidate)) {
                            next = next.withPartition(p, r.withLeader(candidate, r.isr()));
                            break;
                        }
                    }
                }
            }
            topics.put(t.name(), next);
        }
    }

    private ClusterImage build() {
        return new ClusterImage(clusterId, 0, new ArrayList<>(brokers.values()), new ArrayList<>(topics.values()),
                brokerConfigs);
    }

    synchronized void alterBrokerConfigs(String resource, Map<String, String> configs, boolean validateOnly) {
        dev.skein.broker.config.DynamicBrokerConfigs.validateResource(resource);
        dev.skein.broker.config.DynamicBrokerConfigs.validate(configs);
        if (!validateOnly) {
            if (configs.isEmpty()) {
                brokerConfigs.remove(resource);
            } else {
                brokerConfigs.put(resource, Map.copyOf(configs));
            }
            publish();
        }
    }

    private void publish() {
        ClusterImage next = build();
        image = next;
        for (List<Consumer<ClusterImage>> ls : listeners.values()) {
            for (Consumer<ClusterImage> l : List.copyOf(ls)) {
                l.accept(next);
            }
        }
    }

    synchronized TopicMetadata createTopic(String name, int partitions, short rf, Map<String, String> configs, boolean validateOnly) {
        if (topics.containsKey(name)) {
            throw new TopicExistsException("Topic '" + name + "' already exists.");
        }
        if (partitions <= 0) {
            throw new InvalidPartitionsException("Number of partitions was set to an invalid non-positive value.");
        }
        List<Integer> live = brokers.values().stream().filter(b -> !b.fenced()).map(ClusterImage.BrokerInfo::id).toList();
        if (rf <= 0 || rf > live.size()) {
            throw new InvalidReplicationFactorException("Replication factor " + rf + " is not possible with "
                    + live.size() + " live broker(s).");
        }
        TopicConfigs.validate(configs);
        List<PartitionRegistration> parts = new ArrayList<>();
        int start = topics.size();
        for (int p = 0; p < partitions; p++) {
            List<Integer> replicas = new ArrayList<>();
            for (int i = 0; i < rf; i++) {
                replicas.add(live.get((start + p + i) % live.size()));
            }
            parts.add(PartitionRegistration.of(replicas));
        }
        TopicMetadata t = new TopicMetadata(name, Uuid.randomUuid(), parts, configs);
        if (!validateOnly) {
            topics.put(name, t);
            publish();
        }
        return t;
    }

    synchronized void deleteTopic(Uuid id) {
        TopicMetadata t = image.topic(id);
        if (t == null) {
            throw new UnknownTopicIdException("Topic id " + id + " not found.");
        }
        topics.remove(t.name());
        publish();
    }

    synchronized TopicMetadata alterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly) {
        TopicMetadata t = topics.get(topic);
        if (t == null) {
            throw new UnknownTopicOrPartitionException("The topic '" + topic + "' does not exist.");
        }
        TopicConfigs.validate(configs);
        TopicMetadata next = t.withConfigs(configs);
        if (!validateOnly) {
            topics.put(topic, next);
            publish();
        }
        return next;
    }

    synchronized long registerBroker(ClusterImage.BrokerInfo b) {
        brokers.put(b.id(), new ClusterImage.BrokerInfo(b.id(), b.host(), b.port(), b.rack(), b.incarnation(), false));
        electLeaderless();
        publish();
        return ++brokerEpoch;
    }

    synchronized PartitionRegistration alterPartition(TopicPartition tp, int leaderId, int leaderEpoch, int partitionEpoch,
                                                      List<Integer> newIsr) {
        TopicMetadata t = topics.get(tp.topic());
        PartitionRegistration r = t == null ? null : t.partition(tp.partition());
        if (r == null) {
            throw new UnknownTopicOrPartitionException("Unknown partition " + tp);
        }
        if (leaderId != r.leader() || leaderEpoch != r.leaderEpoch()) {
            throw new FencedLeaderEpochException("Leader " + leaderId + " epoch " + leaderEpoch + " is not the current "
                    + r.leader() + " epoch " + r.leaderEpoch());
        }
        if (partitionEpoch != r.partitionEpoch()) {
            throw new InvalidUpdateVersionException("Partition epoch " + partitionEpoch + " is not " + r.partitionEpoch());
        }
        if (!newIsr.contains(leaderId) || !r.replicas().containsAll(newIsr)) {
            throw new InvalidRequestException("ISR " + newIsr + " must hold the leader and only replicas of " + r.replicas());
        }
        for (int b : newIsr) {
            if (!r.isInSync(b) && !unfenced(b)) {
                throw new IneligibleReplicaException("Broker " + b + " is fenced and cannot join the ISR of " + tp);
            }
        }
        PartitionRegistration next = r.withIsr(newIsr);
        topics.put(t.name(), t.withPartition(tp.partition(), next));
        publish();
        return next;
    }

    private final class View implements Controller {
        private final int brokerId;

        View(int brokerId) {
            this.brokerId = brokerId;
        }

        @Override
        public ClusterImage image() {
            return image;
        }

        @Override
        public void addListener(Consumer<ClusterImage> listener) {
            synchronized (SharedTestController.this) {
                listeners.computeIfAbsent(brokerId, k -> new ArrayList<>()).add(listener);
                // an image published between the broker's first read and this call is not lost
                listener.accept(image);
            }
        }

        @Override
        public TopicMetadata createTopic(String name, int partitions, short rf, Map<String, String> configs, boolean validateOnly) {
            return SharedTestController.this.createTopic(name, partitions, rf, configs, validateOnly);
        }

        @Override
        public void alterPartitionReassignment(TopicPartition partition, List<Integer> targetReplicas) {
            throw new InvalidRequestException("The shared test controller does not reassign partitions");
        }

        @Override
        public void electLeader(org.apache.kafka.common.ElectionType type, TopicPartition partition) {
            throw new InvalidRequestException("The shared test controller does not elect leaders");
        }

        @Override
        public void deleteTopic(Uuid topicId) {
            SharedTestController.this.deleteTopic(topicId);
        }

        @Override
        public TopicMetadata createPartitions(String topic, int newCount, boolean validateOnly) {
            throw new InvalidRequestException("The shared test controller does not add partitions");
        }

        @Override
        public TopicMetadata alterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly) {
            return SharedTestController.this.alterTopicConfigs(topic, configs, validateOnly);
        }

        @Override
        public void alterBrokerConfigs(String resource, Map<String, String> configs, boolean validateOnly) {
            SharedTestController.this.alterBrokerConfigs(resource, configs, validateOnly);
        }

        @Override
        public long allocateProducerId() {
            synchronized (SharedTestController.this) {
                return nextProducerId++;
            }
        }

        @Override
        public long registerBroker(ClusterImage.BrokerInfo broker) {
            return SharedTestController.this.registerBroker(broker);
        }

        @Override
        public BrokerHeartbeat heartbeat(int id, long epoch, boolean wantShutdown) {
            return new BrokerHeartbeat(false, true);
        }

        @Override
        public PartitionRegistration alterPartition(TopicPartition tp, int leaderId, int leaderEpoch, int partitionEpoch,
                                                    List<Integer> newIsr) {
            return SharedTestController.this.alterPartition(tp, leaderId, leaderEpoch, partitionEpoch, newIsr);
        }

        @Override
        public void close() {
            synchronized (SharedTestController.this) {
                listeners.remove(brokerId);
            }
        }
    }
}
