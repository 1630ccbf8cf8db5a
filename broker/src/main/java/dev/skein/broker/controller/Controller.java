package dev.skein.broker.controller;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The authority over cluster metadata. Admin requests are checked and applied here; every broker
 * serves the {@link ClusterImage} it publishes. The single-node {@link LocalController} persists to
 * the log dir; the replicated controller quorum (Raft) implements the same contract.
 *
 * <p>Methods throw Kafka's {@link org.apache.kafka.common.errors.ApiException} subclasses for
 * rejected requests, so callers map them to wire error codes in one place.
 */
public interface Controller extends AutoCloseable {

    ClusterImage image();

    /** Called with every new image, in order, after it is durable. */
    void addListener(Consumer<ClusterImage> listener);

    /**
     * Called first with the current image, then with every later one, in order: nothing is missed
     * and nothing older arrives after something newer (a listener added late must not regress).
     */
    default void subscribe(Consumer<ClusterImage> listener) {
        synchronized (this) {
            listener.accept(image());
            addListener(listener);
        }
    }

    /**
     * Waits (bounded) until this node's image includes the metadata log up to {@code offset} (a
     * broker epoch is such an offset); returns whether it does. A node whose metadata is local is
     * always caught up.
     */
    default boolean awaitMetadata(long offset, long timeoutMs) throws InterruptedException {
        return true;
    }

    /**
     * Waits (at most {@code timeoutMs}) until this node's image includes every change the active
     * controller had applied when this was called; returns whether it does. A broker asks before it
     * tells a client that a topic does not exist, so a topic whose creation any broker acknowledged is
     * known to every broker that answers (librdkafka drops the records it holds for a topic a broker
     * calls unknown). A node whose metadata is local is always caught up.
     */
    default boolean catchUp(long timeoutMs) throws InterruptedException {
        return true;
    }

    /** Creates a topic; {@code validateOnly} checks without creating. */
    TopicMetadata createTopic(String name, int partitions, short replicationFactor, Map<String, String> configs,
                              boolean validateOnly);

    /**
     * Creates a topic whose partition {@code i} has the replicas {@code assignment.get(i)} (Kafka's
     * manual assignment: {@code kafka-topics --replica-assignment}, {@code NewTopic(name, Map)}); the
     * first replica is the preferred leader. A controller without manual placement refuses.
     */
    default TopicMetadata createTopic(String name, List<List<Integer>> assignment, Map<String, String> configs,
                                      boolean validateOnly) {
        throw new org.apache.kafka.common.errors.InvalidRequestException("This controller does not place replicas by hand");
    }

    void deleteTopic(Uuid topicId);

    TopicMetadata createPartitions(String topic, int newCount, boolean validateOnly);

    /** Adds partitions with the given replicas each ({@code newAssignment.size()} = new count − current count). */
    default TopicMetadata createPartitions(String topic, int newCount, List<List<Integer>> newAssignment,
                                           boolean validateOnly) {
        throw new org.apache.kafka.common.errors.InvalidRequestException("This controller does not place replicas by hand");
    }

    /** Replaces the topic's config overrides with {@code configs}. */
    TopicMetadata alterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly);

    /**
     * Applies {@code ops} to the topic's current config overrides (IncrementalAlterConfigs). A
     * controller that decides in one place applies them there, against overrides no other change
     * can slip in between; this default reads this node's image, which suits a controller that
     * takes every change itself.
     */
    default TopicMetadata incrementalAlterTopicConfigs(String topic, List<ConfigOp> ops, boolean validateOnly) {
        TopicMetadata t = image().topic(topic);
        if (t == null) {
            throw new org.apache.kafka.common.errors.UnknownTopicOrPartitionException(
                    "The topic '" + topic + "' does not exist.");
        }
        return alterTopicConfigs(topic, ConfigOp.applyAll(t.configs(), ops), validateOnly);
    }

    /** Applies {@code ops} to the dynamic overrides of a broker or of the cluster default, as {@link #incrementalAlterTopicConfigs} does. */
    default void incrementalAlterBrokerConfigs(String resource, List<ConfigOp> ops, boolean validateOnly) {
        alterBrokerConfigs(resource, ConfigOp.applyAll(image().brokerConfigs().getOrDefault(resource, Map.of()), ops),
                validateOnly);
    }

    /**
     * Replaces the dynamic config overrides of a broker ({@code resource} = its id) or of the
     * cluster-wide default ({@code resource} = ""); only
     * {@link dev.skein.broker.config.DynamicBrokerConfigs#DYNAMIC} keys are accepted. A controller
     * that keeps no dynamic broker configs refuses.
     */
    default void alterBrokerConfigs(String resource, Map<String, String> configs, boolean validateOnly) {
        throw new org.apache.kafka.common.errors.InvalidRequestException("This controller keeps no dynamic broker configs");
    }

    /** Allocates a producer id never handed out before in this cluster. */
    long allocateProducerId();

    /**
     * Registers a broker (or re-registers it after a restart) with its endpoint, rack and the
     * incarnation of its log dir; returns the broker epoch its heartbeats must carry. A broker with
     * a new incarnation (an empty disk) is removed from every ISR: it must catch up again.
     */
    long registerBroker(ClusterImage.BrokerInfo broker);

    /** Keeps a registered broker unfenced; {@code wantShutdown} asks to move its leaderships away first. */
    BrokerHeartbeat heartbeat(int brokerId, long brokerEpoch, boolean wantShutdown);

    /**
     * A leader's change of the ISR, applied only if {@code leaderEpoch} and {@code partitionEpoch}
     * match the current registration (compare-and-set); returns the new registration.
     *
     * @throws org.apache.kafka.common.errors.FencedLeaderEpochException if the leader epoch is stale
     * @throws org.apache.kafka.common.errors.InvalidUpdateVersionException if the partition epoch is stale
     */
    PartitionRegistration alterPartition(TopicPartition partition, int leaderId, int leaderEpoch, int partitionEpoch,
                                         List<Integer> newIsr);

    /**
     * Starts (or replaces) the reassignment of one partition to {@code targetReplicas}, or cancels
     * the one in progress if {@code targetReplicas} is null. The new replicas start fetching; the
     * controller completes the reassignment once they are all in sync.
     *
     * @throws org.apache.kafka.common.errors.UnknownTopicOrPartitionException if the partition does not exist
     * @throws org.apache.kafka.common.errors.InvalidReplicaAssignmentException if the target is empty, repeats a
     *         broker or names an unregistered one
     * @throws org.apache.kafka.common.errors.NoReassignmentInProgressException on a cancel with nothing to cancel
     */
    void alterPartitionReassignment(TopicPartition partition, List<Integer> targetReplicas);

    /**
     * Elects a leader of one partition on request (ElectLeaders).
     *
     * @throws org.apache.kafka.common.errors.ElectionNotNeededException if the partition has the wanted leader already
     * @throws org.apache.kafka.common.errors.PreferredLeaderNotAvailableException if the preferred replica cannot lead
     * @throws org.apache.kafka.common.errors.EligibleLeadersNotAvailableException if no replica can lead (unclean)
     */
    void electLeader(ElectionType type, TopicPartition partition);

    @Override
    void close();

    /** The controller quorum as this node sees it; null for a single node without a quorum. */
    default QuorumDescription quorum() {
        return null;
    }
}
