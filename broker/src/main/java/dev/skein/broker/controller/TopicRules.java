package dev.skein.broker.controller;

import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;

import java.util.Collection;
import java.util.Map;

/**
 * The checks every controller applies to topic changes, with Kafka's errors and messages, so the
 * single-node and the quorum controller refuse the same requests the same way.
 */
final class TopicRules {
    private TopicRules() {
    }

    /** A new topic: valid unique name, positive counts, enough live brokers, valid configs. */
    static void checkNewTopic(String name, Collection<String> existingTopics, int partitions, int replicationFactor,
                              int liveBrokers, Map<String, String> configs) {
        Topic.validate(name);
        if (existingTopics.contains(name)) {
            throw new TopicExistsException("Topic '" + name + "' already exists.");
        }
        for (String existing : existingTopics) {
            if (Topic.hasCollision(name, existing)) {
                throw new InvalidTopicException("Topic '" + name + "' collides with existing topic: " + existing);
            }
        }
        if (partitions <= 0) {
            throw new InvalidPartitionsException("Number of partitions was set to an invalid non-positive value.");
        }
        if (replicationFactor <= 0) {
            throw new InvalidReplicationFactorException("Replication factor must be larger than 0.");
        }
        checkReplicationFactor(replicationFactor, liveBrokers);
        TopicConfigs.validate(configs);
    }

    static void checkReplicationFactor(int replicationFactor, int liveBrokers) {
        if (replicationFactor > liveBrokers) {
            throw new InvalidReplicationFactorException("Unable to replicate the partition " + replicationFactor
                    + " time(s): The target replication factor of " + replicationFactor
                    + " cannot be reached because only " + liveBrokers + " broker(s) are registered and live.");
        }
    }

    /** CreatePartitions may only grow a topic that exists; returns it. */
    static TopicMetadata checkPartitionIncrease(TopicMetadata current, int newCount) {
        if (current == null) {
            throw new UnknownTopicOrPartitionException("This server does not host this topic-partition.");
        }
        if (newCount < current.partitionCount()) {
            throw new InvalidPartitionsException("Topic currently has " + current.partitionCount()
                    + " partitions, which is higher than the requested " + newCount + ".");
        }
        if (newCount == current.partitionCount()) {
            throw new InvalidPartitionsException("Topic already has " + current.partitionCount() + " partitions.");
        }
        return current;
    }
}
