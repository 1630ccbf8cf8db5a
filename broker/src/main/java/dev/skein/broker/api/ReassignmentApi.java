package dev.skein.broker.api;

import dev.skein.broker.controller.Controller;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AlterPartitionReassignments, ListPartitionReassignments and ElectLeaders: each partition of a
 * request is one decision of the controller, answered with its own error code, as Kafka does.
 * Listing reads the metadata image this broker serves.
 */
final class ReassignmentApi {
    private final Controller controller;

    ReassignmentApi(Controller controller) {
        this.controller = controller;
    }

    AlterPartitionReassignmentsResponseData alter(AlterPartitionReassignmentsRequestData request, short version) {
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
                .setErrorCode(Errors.NONE.code()).setAllowReplicationFactorChange(request.allowReplicationFactorChange());
        for (AlterPartitionReassignmentsRequestData.ReassignableTopic t : request.topics()) {
            AlterPartitionReassignmentsResponseData.ReassignableTopicResponse topicResponse =
                    new AlterPartitionReassignmentsResponseData.ReassignableTopicResponse().setName(t.name());
            for (AlterPartitionReassignmentsRequestData.ReassignablePartition p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.name(), p.partitionIndex());
                AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse result =
                        new AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse()
                                .setPartitionIndex(p.partitionIndex()).setErrorCode(Errors.NONE.code());
                try {
                    if (version >= 1 && !request.allowReplicationFactorChange() && p.replicas() != null) {
                        checkReplicationFactorKept(tp, p.replicas());
                    }
                    controller.alterPartitionReassignment(tp, p.replicas());
                } catch (ApiException e) {
                    ApiError error = ApiError.fromThrowable(e);
                    result.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
                }
                topicResponse.partitions().add(result);
            }
            response.responses().add(topicResponse);
        }
        return response;
    }

    /** KIP-860: with {@code allowReplicationFactorChange} false a target must keep the original replica count. */
    private void checkReplicationFactorKept(TopicPartition tp, List<Integer> target) {
        TopicMetadata t = controller.image().topic(tp.topic());
        PartitionRegistration p = t == null ? null : t.partition(tp.partition());
        if (p == null) {
            return; // the controller answers UNKNOWN_TOPIC_OR_PARTITION
        }
        int original = p.replicas().size() - p.addingReplicas().size();
        if (target.size() != original) {
            throw new InvalidReplicationFactorException("The replication factor of " + tp + " would change from "
                    + original + " to " + target.size() + ", and the request does not allow replication factor changes.");
        }
    }

    ListPartitionReassignmentsResponseData list(ListPartitionReassignmentsRequestData request) {
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData()
                .setErrorCode(Errors.NONE.code());
        Map<String, List<Integer>> wanted = new LinkedHashMap<>();
        if (request.topics() == null) {
            for (TopicMetadata t : controller.image().topics()) {
                List<Integer> all = new ArrayList<>();
                for (int i = 0; i < t.partitionCount(); i++) {
                    all.add(i);
                }
                wanted.put(t.name(), all);
            }
        } else {
            request.topics().forEach(t -> wanted.put(t.name(), t.partitionIndexes()));
        }
        var image = controller.image();
        wanted.forEach((name, partitions) -> {
            TopicMetadata t = image.topic(name);
            if (t == null) {
                return;
            }
            ListPartitionReassignmentsResponseData.OngoingTopicReassignment ongoing =
                    new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(name);
            for (int i : partitions) {
                PartitionRegistration p = t.partition(i);
                if (p != null && (!p.addingReplicas().isEmpty() || !p.removingReplicas().isEmpty())) {
                    ongoing.partitions().add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment()
                            .setPartitionIndex(i).setReplicas(new ArrayList<>(p.replicas()))
                            .setAddingReplicas(new ArrayList<>(p.addingReplicas()))
                            .setRemovingReplicas(new ArrayList<>(p.removingReplicas())));
                }
            }
            if (!ongoing.partitions().isEmpty()) {
                response.topics().add(ongoing);
            }
        });
        return response;
    }

    /**
     * With no partitions named, every partition is a candidate and, as in Kafka, those that need no
     * election are left out of the answer.
     */
    ElectLeadersResponseData electLeaders(ElectLeadersRequestData request, short version) {
        ElectionType type = version == 0 ? ElectionType.PREFERRED : ElectionType.valueOf(request.electionType());
        boolean all = request.topicPartitions() == null;
        Map<String, List<Integer>> wanted = new LinkedHashMap<>();
        if (all) {
            for (TopicMetadata t : controller.image().topics()) {
                List<Integer> ps = new ArrayList<>();
                for (int i = 0; i < t.partitionCount(); i++) {
                    ps.add(i);
                }
                wanted.put(t.name(), ps);
            }
        } else {
            request.topicPartitions().forEach(t ->
                    wanted.computeIfAbsent(t.topic(), k -> new ArrayList<>()).addAll(t.partitions()));
        }
        ElectLeadersResponseData response = new ElectLeadersResponseData().setErrorCode(Errors.NONE.code());
        wanted.forEach((topic, partitions) -> {
            ElectLeadersResponseData.ReplicaElectionResult result =
                    new ElectLeadersResponseData.ReplicaElectionResult().setTopic(topic);
            for (int i : partitions) {
                ElectLeadersResponseData.PartitionResult pr = new ElectLeadersResponseData.PartitionResult()
                        .setPartitionId(i).setErrorCode(Errors.NONE.code());
                try {
                    controller.electLeader(type, new TopicPartition(topic, i));
                } catch (ElectionNotNeededException e) {
                    if (all) {
                        continue;
                    }
                    pr.setErrorCode(Errors.ELECTION_NOT_NEEDED.code()).setErrorMessage(e.getMessage());
                } catch (ApiException e) {
                    ApiError error = ApiError.fromThrowable(e);
                    pr.setErrorCode(error.error().code()).setErrorMessage(error.messageWithFallback());
                }
                result.partitionResult().add(pr);
            }
            if (!result.partitionResult().isEmpty()) {
                response.replicaElectionResults().add(result);
            }
        });
        return response;
    }
}
