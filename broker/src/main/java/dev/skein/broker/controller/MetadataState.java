package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The replicated cluster metadata as an immutable value: registered brokers, topics with their
 * partitions, and the next free producer id. {@link #apply} is a pure function of the state, the
 * commands and the log index, so every controller that applies the same log reaches the same state.
 * A batch of commands is applied atomically: if one command's precondition fails, the whole batch
 * is rejected with that command's {@link ApiException} and the state is unchanged.
 */
public final class MetadataState {
    public static final MetadataState EMPTY = new MetadataState(Map.of(), Map.of(), 0);

    private final Map<Integer, BrokerRegistration> brokers;
    private final Map<String, TopicMetadata> topics;
    private final long nextProducerId;
    private final Map<String, Map<String, String>> brokerConfigs;

    public MetadataState(Map<Integer, BrokerRegistration> brokers, Map<String, TopicMetadata> topics, long nextProducerId) {
        this(brokers, topics, nextProducerId, Map.of());
    }

    /** With dynamic broker configs: resource ("" for the cluster default, else a broker id) to overrides. */
    public MetadataState(Map<Integer, BrokerRegistration> brokers, Map<String, TopicMetadata> topics, long nextProducerId,
                         Map<String, Map<String, String>> brokerConfigs) {
        this.brokers = Collections.unmodifiableMap(new TreeMap<>(brokers));
        this.topics = Collections.unmodifiableMap(new TreeMap<>(topics));
        this.nextProducerId = nextProducerId;
        Map<String, Map<String, String>> configs = new TreeMap<>();
        brokerConfigs.forEach((k, v) -> {
            if (!v.isEmpty()) {
                configs.put(k, Collections.unmodifiableMap(new TreeMap<>(v)));
            }
        });
        this.brokerConfigs = Collections.unmodifiableMap(configs);
    }

    /** Dynamic broker config overrides by resource ("" = cluster-wide default, else a broker id), sorted. */
    public Map<String, Map<String, String>> brokerConfigs() {
        return brokerConfigs;
    }

    /** The outcome of an applied batch: the new state and the value the last command yields (epoch, producer id). */
    public record Applied(MetadataState state, long value) {
    }

    /** Brokers by id, ascending. */
    public Map<Integer, BrokerRegistration> brokers() {
        return brokers;
    }

    /** Topics by name, ascending. */
    public Map<String, TopicMetadata> topics() {
        return topics;
    }

    public long nextProducerId() {
        return nextProducerId;
    }

    public BrokerRegistration broker(int id) {
        return brokers.get(id);
    }

    public boolean isLive(int brokerId) {
        BrokerRegistration b = brokers.get(brokerId);
        return b != null && !b.fenced();
    }

    public TopicMetadata topic(String name) {
        return topics.get(name);
    }

    public TopicMetadata topic(Uuid id) {
        for (TopicMetadata t : topics.values()) {
            if (t.id().equals(id)) {
                return t;
            }
        }
        return null;
    }

    public ClusterImage toImage(String clusterId, int controllerId) {
        return new ClusterImage(clusterId, controllerId, brokers.values().stream().map(BrokerRegistration::toInfo).toList(),
                topics.values()).withBrokerConfigs(brokerConfigs);
    }

    /** Applies {@code commands} (one log entry at {@code logIndex}) atomically. */
    public Applied apply(List<MetadataCommand> commands, long logIndex) {
        Builder b = new Builder(this);
        long value = 0;
        for (MetadataCommand c : commands) {
            value = b.apply(c, logIndex);
        }
        return new Applied(b.build(), value);
    }

    /** A mutable copy used while one batch is applied. */
    private static final class Builder {
        private final Map<Integer, BrokerRegistration> brokers;
        private final Map<String, TopicMetadata> topics;
        private long nextProducerId;
        private final Map<String, Map<String, String>> brokerConfigs;

        Builder(MetadataState s) {
            brokers = new TreeMap<>(s.brokers);
            topics = new TreeMap<>(s.topics);
            nextProducerId = s.nextProducerId;
            brokerConfigs = new TreeMap<>(s.brokerConfigs);
        }

        MetadataState build() {
            return new MetadataState(brokers, topics, nextProducerId, brokerConfigs);
        }

        long apply(MetadataCommand command, long logIndex) {
            return switch (command) {
                case MetadataCommand.RegisterBroker r -> {
                    brokers.put(r.brokerId(), new BrokerRegistration(r.brokerId(), r.host(), r.port(), r.rack(),
                            r.incarnation(), logIndex, true));
                    yield logIndex;
                }
                case MetadataCommand.UnfenceBroker u -> {
                    brokers.put(u.brokerId(), registered(u.brokerId(), u.brokerEpoch()).withFenced(false));
                    yield u.brokerEpoch();
                }
                case MetadataCommand.FenceBroker f -> {
                    brokers.put(f.brokerId(), registered(f.brokerId(), f.brokerEpoch()).withFenced(true));
                    yield f.brokerEpoch();
                }
                case MetadataCommand.CreateTopic c -> {
                    if (topics.containsKey(c.name())) {
                        throw new TopicExistsException("Topic '" + c.name() + "' already exists.");
                    }
                    checkReplicas(c.assignment());
                    List<PartitionRegistration> parts = new ArrayList<>();
                    c.assignment().forEach(r -> parts.add(PartitionRegistration.of(r)));
                    topics.put(c.name(), new TopicMetadata(c.name(), c.topicId(), parts, c.configs()));
                    yield 0;
                }
                case MetadataCommand.DeleteTopic d -> {
                    topics.remove(topic(d.topicId()).name());
                    yield 0;
                }
                case MetadataCommand.CreatePartitions c -> {
                    TopicMetadata t = topic(c.topicId());
                    if (t.partitionCount() != c.expectedCount()) {
                        throw new InvalidPartitionsException("Topic " + t.name() + " has " + t.partitionCount()
                                + " partitions now, not " + c.expectedCount() + ".");
                    }
                    checkReplicas(c.newAssignment());
                    topics.put(t.name(), t.withMorePartitions(c.newAssignment()));
                    yield 0;
                }
                case MetadataCommand.AlterTopicConfigs a -> {
                    TopicMetadata t = topic(a.topicId());
                    topics.put(t.name(), t.withConfigs(a.configs()));
                    yield 0;
                }
                case MetadataCommand.ChangePartition c -> {
                    TopicMetadata t = topic(c.topicId());
                    PartitionRegistration p = t.partition(c.partition());
                    if (p == null) {
                        throw new UnknownTopicOrPartitionException("Unknown partition " + t.name() + "-" + c.partition());
                    }
                    if (p.partitionEpoch() != c.expectedPartitionEpoch()) {
                        throw new InvalidUpdateVersionException("Partition " + t.name() + "-" + c.partition()
                                + " is at partition epoch " + p.partitionEpoch() + ", not " + c.expectedPartitionEpoch());
                    }
                    if (!p.replicas().containsAll(c.isr())
                            || (c.leader() != PartitionRegistration.NO_LEADER && !p.replicas().contains(c.leader()))) {
                        throw new InvalidRequestException("Leader " + c.leader() + " and ISR " + c.isr()
                                + " must be replicas of " + t.name() + "-" + c.partition() + ": " + p.replicas());
                    }
                    PartitionRegistration next = new PartitionRegistration(p.replicas(), c.isr(), c.leader(),
                            c.leaderEpoch(), p.partitionEpoch() + 1, p.addingReplicas(), p.removingReplicas());
                    topics.put(t.name(), t.withPartition(c.partition(), next));
                    yield next.partitionEpoch();
                }
                case MetadataCommand.ReassignPartition r -> {
                    TopicMetadata t = topic(r.topicId());
                    PartitionRegistration p = t.partition(r.partition());
                    if (p == null) {
                        throw new UnknownTopicOrPartitionException("Unknown partition " + t.name() + "-" + r.partition());
                    }
                    if (p.partitionEpoch() != r.expectedPartitionEpoch()) {
                        throw new InvalidUpdateVersionException("Partition " + t.name() + "-" + r.partition()
                                + " is at partition epoch " + p.partitionEpoch() + ", not " + r.expectedPartitionEpoch());
                    }
                    checkReplicas(List.of(r.replicas()));
                    if (!r.replicas().containsAll(r.isr()) || !r.replicas().containsAll(r.addingReplicas())
                            || !r.replicas().containsAll(r.removingReplicas())
                            || (r.leader() != PartitionRegistration.NO_LEADER && !r.replicas().contains(r.leader()))) {
                        throw new InvalidRequestException("Leader " + r.leader() + ", ISR " + r.isr() + ", adding "
                                + r.addingReplicas() + " and removing " + r.removingReplicas() + " must be replicas of "
                                + t.name() + "-" + r.partition() + ": " + r.replicas());
                    }
                    PartitionRegistration next = new PartitionRegistration(r.replicas(), r.isr(), r.leader(),
                            r.leaderEpoch(), p.partitionEpoch() + 1, r.addingReplicas(), r.removingReplicas());
                    topics.put(t.name(), t.withPartition(r.partition(), next));
                    yield next.partitionEpoch();
                }
                case MetadataCommand.ProducerIdBlock b -> {
                    long first = nextProducerId;
                    nextProducerId += b.size();
                    yield first;
                }
                case MetadataCommand.AlterBrokerConfigs a -> {
                    if (a.configs().isEmpty()) {
                        brokerConfigs.remove(a.resource());
                    } else {
                        brokerConfigs.put(a.resource(), a.configs());
                    }
                    yield 0;
                }
            };
        }

        private BrokerRegistration registered(int id, long epoch) {
            BrokerRegistration b = brokers.get(id);
            if (b == null) {
                throw new BrokerIdNotRegisteredException("Broker " + id + " is not registered.");
            }
            if (b.epoch() != epoch) {
                throw new StaleBrokerEpochException("Broker " + id + " is at epoch " + b.epoch() + ", not " + epoch);
            }
            return b;
        }

        private TopicMetadata topic(Uuid id) {
            for (TopicMetadata t : topics.values()) {
                if (t.id().equals(id)) {
                    return t;
                }
            }
            throw new UnknownTopicIdException("Topic id " + id + " not found.");
        }

        private void checkReplicas(List<List<Integer>> assignment) {
            for (List<Integer> replicas : assignment) {
                if (replicas.isEmpty() || replicas.stream().distinct().count() != replicas.size()) {
                    throw new InvalidRequestException("Invalid replica assignment " + replicas);
                }
                for (int r : replicas) {
                    if (!brokers.containsKey(r)) {
                        throw new InvalidRequestException("Replica " + r + " is not a registered broker.");
                    }
                }
            }
        }
    }
}
