package dev.skein.broker.controller;

import org.apache.kafka.common.Uuid;

import java.util.List;
import java.util.Map;

/**
 * One change of the replicated cluster metadata. The active controller decides every choice
 * (placement, topic id, new leader) before a command is proposed, so applying a command is
 * deterministic: every controller applies the same commands in log order and reaches the same
 * {@link MetadataState}. A command whose precondition no longer holds when it is applied (a stale
 * partition epoch, a topic created meanwhile) is rejected on every node alike.
 */
public sealed interface MetadataCommand {

    /** A broker (re-)registers; its broker epoch is the log index of this command. */
    record RegisterBroker(int brokerId, String host, int port, String rack, Uuid incarnation) implements MetadataCommand {
    }

    /** The broker's first heartbeat of {@code brokerEpoch} was processed: it may lead and be in an ISR. */
    record UnfenceBroker(int brokerId, long brokerEpoch) implements MetadataCommand {
    }

    /** The broker missed its session timeout (or shut down): it may not lead or be in an ISR. */
    record FenceBroker(int brokerId, long brokerEpoch) implements MetadataCommand {
    }

    /** A new topic with its replica assignment (partition index to replicas, preferred leader first). */
    record CreateTopic(String name, Uuid topicId, List<List<Integer>> assignment, Map<String, String> configs)
            implements MetadataCommand {
        public CreateTopic {
            assignment = assignment.stream().map(List::copyOf).toList();
            configs = Map.copyOf(configs);
        }
    }

    record DeleteTopic(Uuid topicId) implements MetadataCommand {
    }

    /** Partitions appended to a topic, with their replicas; {@code expectedCount} guards against a race. */
    record CreatePartitions(Uuid topicId, int expectedCount, List<List<Integer>> newAssignment) implements MetadataCommand {
        public CreatePartitions {
            newAssignment = newAssignment.stream().map(List::copyOf).toList();
        }
    }

    /** Replaces the topic's config overrides. */
    record AlterTopicConfigs(Uuid topicId, Map<String, String> configs) implements MetadataCommand {
        public AlterTopicConfigs {
            configs = Map.copyOf(configs);
        }
    }

    /**
     * A new leader and/or ISR of one partition, applied only while the partition epoch is still
     * {@code expectedPartitionEpoch} (compare-and-set); the partition epoch then becomes one more.
     */
    record ChangePartition(Uuid topicId, int partition, int expectedPartitionEpoch, int leader, int leaderEpoch,
                           List<Integer> isr) implements MetadataCommand {
        public ChangePartition {
            isr = List.copyOf(isr);
        }
    }

    /**
     * A partition's whole registration replaced by a reassignment step (start, completion or
     * cancellation), applied only while the partition epoch is still {@code expectedPartitionEpoch};
     * the partition epoch then becomes one more. Every replica must be a registered broker, once.
     */
    record ReassignPartition(Uuid topicId, int partition, int expectedPartitionEpoch, List<Integer> replicas,
                             List<Integer> isr, int leader, int leaderEpoch, List<Integer> addingReplicas,
                             List<Integer> removingReplicas) implements MetadataCommand {
        public ReassignPartition {
            replicas = List.copyOf(replicas);
            isr = List.copyOf(isr);
            addingReplicas = List.copyOf(addingReplicas);
            removingReplicas = List.copyOf(removingReplicas);
        }
    }

    /** Reserves the next {@code size} producer ids; the block starts where the previous one ended. */
    record ProducerIdBlock(int size) implements MetadataCommand {
    }

    /**
     * Replaces the dynamic config overrides of one broker ({@code resource} = its id) or of the
     * cluster-wide default ({@code resource} = ""); an empty map removes them.
     */
    record AlterBrokerConfigs(String resource, Map<String, String> configs) implements MetadataCommand {
        public AlterBrokerConfigs {
            configs = Map.copyOf(configs);
        }
    }
}
