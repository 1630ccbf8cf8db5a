package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.Uuid;

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

    /** Creates a topic; {@code validateOnly} checks without creating. */
    TopicMetadata createTopic(String name, int partitions, short replicationFactor, Map<String, String> configs,
                              boolean validateOnly);

    void deleteTopic(Uuid topicId);

    TopicMetadata createPartitions(String topic, int newCount, boolean validateOnly);

    /** Replaces the topic's config overrides with {@code configs}. */
    TopicMetadata alterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly);

    /** Allocates a producer id never handed out before in this cluster. */
    long allocateProducerId();

    @Override
    void close();
}
