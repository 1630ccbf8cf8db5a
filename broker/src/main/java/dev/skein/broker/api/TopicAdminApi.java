package dev.skein.broker.api;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.coordinator.GroupCoordinator;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.TopicDeletionDisabledException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** CreateTopics, DeleteTopics and CreatePartitions, checked and applied by the controller. */
final class TopicAdminApi {
    /**
     * The most partitions one CreateTopics or CreatePartitions request may add, over all its topics:
     * Apache Kafka's limit, which keeps one request's metadata change to one bounded log entry.
     */
    static final int MAX_PARTITIONS_PER_REQUEST = 10_000;

    private final Controller controller;
    private final BrokerConfig config;
    private final ConfigsApi configs;
    private final GroupCoordinator coordinator;

    TopicAdminApi(Controller controller, BrokerConfig config, ConfigsApi configs, GroupCoordinator coordinator) {
        this.controller = controller;
        this.config = config;
        this.configs = configs;
        this.coordinator = coordinator;
    }

    CreateTopicsResponseData createTopics(CreateTopicsRequestData request, short version) {
        CreateTopicsResponseData response = new CreateTopicsResponseData();
        Set<String> seen = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        for (CreateTopicsRequestData.CreatableTopic t : request.topics()) {
            if (!seen.add(t.name())) {
                duplicates.add(t.name());
            }
        }
        // counted as Kafka counts them: the topics named once, each with its default if it gives no count
        long newPartitions = 0;
        for (CreateTopicsRequestData.CreatableTopic t : request.topics()) {
            if (duplicates.contains(t.name())) {
                continue;
            }
            if (!t.assignments().isEmpty()) {
                newPartitions += t.assignments().size();
            } else if (t.numPartitions() == -1) {
                newPartitions += config.numPartitions();
            } else if (t.numPartitions() > 0) {
                newPartitions += t.numPartitions();
            }
        }
        // the whole request is refused, as Kafka does: its topics are one change of the cluster
        PolicyViolationException tooMany = newPartitions > MAX_PARTITIONS_PER_REQUEST ? tooManyPartitions(newPartitions) : null;
        for (CreateTopicsRequestData.CreatableTopic t : request.topics()) {
            CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult()
                    .setName(t.name()).setTopicId(Uuid.ZERO_UUID).setNumPartitions(-1).setReplicationFactor((short) -1);
            if (response.topics().find(t.name()) != null) {
                continue;
            }
            try {
                if (duplicates.contains(t.name())) {
                    throw new InvalidRequestException("Create topics request from client contains multiple entries for topic " + t.name());
                }
                if (tooMany != null) {
                    throw tooMany;
                }
                int partitions = t.numPartitions();
                short rf = t.replicationFactor();
                if (!t.assignments().isEmpty()) {
                    if (partitions != -1 || rf != -1) {
                        throw new InvalidRequestException("Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.");
                    }
                    partitions = t.assignments().size();
                    rf = (short) t.assignments().iterator().next().brokerIds().size();
                    checkAssignments(t.assignments().stream().map(a -> a.brokerIds()).toList(), rf);
                }
                if (partitions == -1) {
                    partitions = config.numPartitions();
                }
                if (rf == -1) {
                    rf = (short) config.defaultReplicationFactor();
                }
                if (dev.skein.broker.metadata.Topics.isInternal(t.name())) {
                    throw new InvalidRequestException("Creation of internal topic " + t.name() + " is prohibited.");
                }
                Map<String, String> overrides = new HashMap<>();
                for (CreateTopicsRequestData.CreatableTopicConfig c : t.configs()) {
                    overrides.put(c.name(), c.value());
                }
                TopicMetadata created = t.assignments().isEmpty()
                        ? controller.createTopic(t.name(), partitions, rf, overrides, request.validateOnly())
                        : controller.createTopic(t.name(), assignment(t), overrides, request.validateOnly());
                result.setTopicId(request.validateOnly() ? Uuid.ZERO_UUID : created.id())
                        .setNumPartitions(partitions).setReplicationFactor(rf);
                if (version >= 5) {
                    result.setConfigs(configs.createTopicConfigs(created));
                }
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            response.topics().add(result);
        }
        return response;
    }

    private static PolicyViolationException tooManyPartitions(long newPartitions) {
        // Kafka's message first: tools match on it
        return new PolicyViolationException("Excessively large number of partitions per request. The request adds "
                + newPartitions + " partitions; one request may add at most " + MAX_PARTITIONS_PER_REQUEST + ".");
    }

    /** The request's replicas per partition, in partition order (the request names each partition's index). */
    private static List<List<Integer>> assignment(CreateTopicsRequestData.CreatableTopic t) {
        List<CreateTopicsRequestData.CreatableReplicaAssignment> sorted = new ArrayList<>(t.assignments());
        sorted.sort(java.util.Comparator.comparingInt(CreateTopicsRequestData.CreatableReplicaAssignment::partitionIndex));
        for (int i = 0; i < sorted.size(); i++) {
            if (sorted.get(i).partitionIndex() != i) {
                throw new InvalidReplicaAssignmentException("The manual partition assignment must name partitions 0 to "
                        + (sorted.size() - 1) + " once each, not " + sorted.stream()
                        .map(CreateTopicsRequestData.CreatableReplicaAssignment::partitionIndex).toList());
            }
        }
        return sorted.stream().map(a -> List.copyOf(a.brokerIds())).toList();
    }

    private void checkAssignments(List<List<Integer>> assignments, short rf) {
        ClusterImage image = controller.image();
        for (List<Integer> replicas : assignments) {
            if (replicas.size() != rf) {
                throw new InvalidReplicaAssignmentException("All partitions should have the same number of replicas.");
            }
            if (new HashSet<>(replicas).size() != replicas.size()) {
                throw new InvalidReplicaAssignmentException("Duplicate replica assignment found: " + replicas);
            }
            for (int b : replicas) {
                if (image.broker(b) == null) {
                    throw new InvalidReplicaAssignmentException("Unknown broker " + b + " in the replica assignment " + replicas);
                }
            }
        }
    }

    DeleteTopicsResponseData deleteTopics(DeleteTopicsRequestData request, short version) {
        DeleteTopicsResponseData response = new DeleteTopicsResponseData();
        List<DeleteTopicsRequestData.DeleteTopicState> states = new ArrayList<>(request.topics());
        for (String name : request.topicNames()) {
            states.add(new DeleteTopicsRequestData.DeleteTopicState().setName(name).setTopicId(Uuid.ZERO_UUID));
        }
        List<String> deleted = new ArrayList<>();
        for (DeleteTopicsRequestData.DeleteTopicState s : states) {
            DeleteTopicsResponseData.DeletableTopicResult result = new DeleteTopicsResponseData.DeletableTopicResult()
                    .setName(s.name()).setTopicId(s.topicId() == null ? Uuid.ZERO_UUID : s.topicId());
            try {
                TopicMetadata t = lookUp(controller.image(), s);
                if (t == null) {
                    // created through another broker a moment ago, perhaps: "unknown" fails the caller's
                    // delete, or reads to it as "already gone" while the topic stays
                    t = lookUp(MetadataApi.caughtUp(controller), s);
                }
                if (t == null && s.name() != null) {
                    throw new UnknownTopicOrPartitionException("This server does not host this topic-partition.");
                }
                if (t == null) {
                    throw new UnknownTopicIdException("Topic id " + s.topicId() + " not found.");
                }
                result.setName(t.name()).setTopicId(t.id());
                if (!config.deleteTopicEnable()) {
                    throw new TopicDeletionDisabledException("Topic deletion is disabled.");
                }
                if (t.isInternal()) {
                    throw new InvalidTopicException("Internal topic " + t.name() + " cannot be deleted.");
                }
                controller.deleteTopic(t.id());
                deleted.add(t.name());
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            if (version < 6) {
                result.setTopicId(Uuid.ZERO_UUID);
            }
            response.responses().add(result);
        }
        if (!deleted.isEmpty()) {
            coordinator.onTopicsDeleted(deleted);
        }
        return response;
    }

    private static TopicMetadata lookUp(ClusterImage image, DeleteTopicsRequestData.DeleteTopicState s) {
        return s.name() != null ? image.topic(s.name()) : image.topic(s.topicId());
    }

    CreatePartitionsResponseData createPartitions(CreatePartitionsRequestData request) {
        CreatePartitionsResponseData response = new CreatePartitionsResponseData();
        Set<String> seen = new HashSet<>();
        long newPartitions = 0;
        ClusterImage image = controller.image();
        for (CreatePartitionsRequestData.CreatePartitionsTopic t : request.topics()) {
            TopicMetadata current = image.topic(t.name());
            if (current != null && t.count() > current.partitionCount()) {
                newPartitions += t.count() - current.partitionCount();
            }
        }
        PolicyViolationException tooMany = newPartitions > MAX_PARTITIONS_PER_REQUEST ? tooManyPartitions(newPartitions) : null;
        for (CreatePartitionsRequestData.CreatePartitionsTopic t : request.topics()) {
            CreatePartitionsResponseData.CreatePartitionsTopicResult result =
                    new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(t.name());
            try {
                if (!seen.add(t.name())) {
                    throw new InvalidRequestException("Duplicate topic in request: " + t.name());
                }
                if (tooMany != null) {
                    throw tooMany;
                }
                if (dev.skein.broker.metadata.Topics.isInternal(t.name())) {
                    throw new InvalidRequestException("Cannot add partitions to internal topic " + t.name());
                }
                TopicMetadata current = controller.image().topic(t.name());
                if (current != null && t.assignments() != null) {
                    if (t.assignments().size() != t.count() - current.partitionCount()) {
                        throw new InvalidReplicaAssignmentException("Increasing the number of partitions by "
                                + (t.count() - current.partitionCount()) + " but " + t.assignments().size()
                                + " assignments provided.");
                    }
                    checkAssignments(t.assignments().stream().map(a -> a.brokerIds()).toList(),
                            (short) current.partition(0).replicas().size());
                }
                if (t.assignments() != null) {
                    controller.createPartitions(t.name(), t.count(),
                            t.assignments().stream().map(a -> List.copyOf(a.brokerIds())).toList(), request.validateOnly());
                } else {
                    controller.createPartitions(t.name(), t.count(), request.validateOnly());
                }
                result.setErrorCode(Errors.NONE.code()).setErrorMessage(null);
            } catch (ApiException e) {
                ApiError error = ApiError.fromThrowable(e);
                result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
            }
            response.results().add(result);
        }
        return response;
    }
}
