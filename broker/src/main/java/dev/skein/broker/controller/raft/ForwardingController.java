package dev.skein.broker.controller.raft;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.controller.BrokerHeartbeat;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownServerException;

import java.util.List;
import java.util.Map;

/**
 * The requests of the {@link Controller} contract as a node of a quorum makes them: each becomes a
 * {@link ControllerRequest} that {@link #call} sends to the active controller, returning once this
 * node's metadata includes the outcome. A voter ({@link RaftController}) and a broker that is not
 * one ({@link QuorumObserver}) differ only in how they send and how they follow the metadata.
 */
abstract class ForwardingController implements Controller {
    static final int PRODUCER_ID_BLOCK_SIZE = 1000;

    private long nextProducerId;
    private long producerIdBlockEnd;

    /**
     * Sends {@code request} to the active controller and waits (bounded) until this node's metadata
     * includes its outcome; throws the Kafka exception the controller answered with, or
     * {@link org.apache.kafka.common.errors.NotControllerException} (retriable) without a quorum.
     */
    abstract ControllerReply call(ControllerRequest request);

    @Override
    public TopicMetadata createTopic(String name, int partitions, short replicationFactor, Map<String, String> configs,
                                     boolean validateOnly) {
        return topicOf(call(new ControllerRequest.CreateTopic(name, partitions, replicationFactor, configs, validateOnly)));
    }

    @Override
    public TopicMetadata createTopic(String name, List<List<Integer>> assignment, Map<String, String> configs,
                                     boolean validateOnly) {
        return topicOf(call(new ControllerRequest.CreateTopicAssigned(name, assignment, configs, validateOnly)));
    }

    @Override
    public TopicMetadata createPartitions(String topic, int newCount, List<List<Integer>> newAssignment,
                                         boolean validateOnly) {
        return topicOf(call(new ControllerRequest.CreatePartitionsAssigned(topic, newCount, newAssignment, validateOnly)));
    }

    @Override
    public void deleteTopic(Uuid topicId) {
        call(new ControllerRequest.DeleteTopic(topicId));
    }

    @Override
    public TopicMetadata createPartitions(String topic, int newCount, boolean validateOnly) {
        return topicOf(call(new ControllerRequest.CreatePartitions(topic, newCount, validateOnly)));
    }

    @Override
    public TopicMetadata alterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly) {
        return topicOf(call(new ControllerRequest.AlterTopicConfigs(topic, configs, validateOnly)));
    }

    @Override
    public TopicMetadata incrementalAlterTopicConfigs(String topic, List<ConfigOp> ops, boolean validateOnly) {
        try {
            return topicOf(call(new ControllerRequest.IncrementalAlterTopicConfigs(topic, ops, validateOnly)));
        } catch (UnknownServerException e) {
            if (!predatesIncrementalAlter(e)) {
                throw e;
            }
            return Controller.super.incrementalAlterTopicConfigs(topic, ops, validateOnly);
        }
    }

    @Override
    public void incrementalAlterBrokerConfigs(String resource, List<ConfigOp> ops, boolean validateOnly) {
        try {
            call(new ControllerRequest.IncrementalAlterBrokerConfigs(resource, ops, validateOnly));
        } catch (UnknownServerException e) {
            if (!predatesIncrementalAlter(e)) {
                throw e;
            }
            Controller.super.incrementalAlterBrokerConfigs(resource, ops, validateOnly);
        }
    }

    /**
     * An active controller of an older version (in the middle of a rolling update) does not know the
     * incremental requests; this node then applies the operations to its own image, as it did before.
     */
    private static boolean predatesIncrementalAlter(UnknownServerException e) {
        return e.getMessage() != null && e.getMessage().contains("Unknown controller request type");
    }

    @Override
    public void alterBrokerConfigs(String resource, Map<String, String> configs, boolean validateOnly) {
        call(new ControllerRequest.AlterBrokerConfigs(resource, configs, validateOnly));
    }

    /** Producer ids come in blocks reserved through the metadata log, so they never repeat across failover. */
    @Override
    public synchronized long allocateProducerId() {
        if (nextProducerId >= producerIdBlockEnd) {
            long first = call(new ControllerRequest.AllocateProducerIds(PRODUCER_ID_BLOCK_SIZE)).value();
            nextProducerId = first;
            producerIdBlockEnd = first + PRODUCER_ID_BLOCK_SIZE;
        }
        return nextProducerId++;
    }

    @Override
    public long registerBroker(ClusterImage.BrokerInfo broker) {
        return call(new ControllerRequest.RegisterBroker(broker)).value();
    }

    @Override
    public BrokerHeartbeat heartbeat(int brokerId, long brokerEpoch, boolean wantShutdown) {
        long flags = call(new ControllerRequest.Heartbeat(brokerId, brokerEpoch, wantShutdown)).value();
        return new BrokerHeartbeat((flags & 1) != 0, (flags & 2) != 0);
    }

    @Override
    public PartitionRegistration alterPartition(TopicPartition partition, int leaderId, int leaderEpoch,
                                                int partitionEpoch, List<Integer> newIsr) {
        ControllerReply reply = call(new ControllerRequest.AlterPartition(partition, leaderId, leaderEpoch,
                partitionEpoch, newIsr));
        return topicOf(reply).partition(partition.partition());
    }

    @Override
    public void alterPartitionReassignment(TopicPartition partition, List<Integer> targetReplicas) {
        call(new ControllerRequest.AlterReassignment(partition, targetReplicas));
    }

    @Override
    public void electLeader(ElectionType type, TopicPartition partition) {
        call(new ControllerRequest.ElectLeader(type.value, partition));
    }

    private static TopicMetadata topicOf(ControllerReply reply) {
        return MetadataCodec.decodeState(reply.topic()).topics().values().iterator().next();
    }
}
