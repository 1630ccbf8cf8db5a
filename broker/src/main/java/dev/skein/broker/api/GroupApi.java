package dev.skein.broker.api;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.metadata.Topics;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.utils.Utils;

import java.util.ArrayList;
import java.util.List;

/**
 * FindCoordinator: as in Kafka, a group's coordinator is the leader of its {@code __consumer_offsets}
 * partition, {@code abs(hash(groupId)) % partitions}, where the group's state is written. Transaction
 * and share coordinators are not offered.
 */
final class GroupApi {

    FindCoordinatorResponseData findCoordinator(FindCoordinatorRequestData request, short version, ClusterImage image) {
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (version < 4) {
            Coordinator c = coordinator(request.keyType(), request.key(), image);
            return response.setErrorCode(c.error.code()).setErrorMessage(c.message)
                    .setNodeId(c.nodeId).setHost(c.host).setPort(c.port);
        }
        List<FindCoordinatorResponseData.Coordinator> out = new ArrayList<>();
        for (String key : request.coordinatorKeys()) {
            Coordinator c = coordinator(request.keyType(), key, image);
            out.add(new FindCoordinatorResponseData.Coordinator().setKey(key)
                    .setErrorCode(c.error.code()).setErrorMessage(c.message)
                    .setNodeId(c.nodeId).setHost(c.host).setPort(c.port));
        }
        return response.setCoordinators(out);
    }

    private record Coordinator(Errors error, String message, int nodeId, String host, int port) {
        static Coordinator unavailable(String why) {
            return new Coordinator(Errors.COORDINATOR_NOT_AVAILABLE, why, -1, "", -1);
        }
    }

    private static Coordinator coordinator(byte keyType, String groupId, ClusterImage image) {
        if (keyType != FindCoordinatorRequest.CoordinatorType.GROUP.id()) {
            String what = keyType == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id() ? "transactions" : "share groups";
            return new Coordinator(Errors.INVALID_REQUEST, "Skein does not support " + what + " yet", -1, "", -1);
        }
        TopicMetadata offsets = image.topic(Topics.GROUP_METADATA_TOPIC);
        if (offsets == null || offsets.partitionCount() == 0) {
            return Coordinator.unavailable("The group metadata topic is not created yet");
        }
        int partition = Utils.abs((groupId == null ? "" : groupId).hashCode()) % offsets.partitionCount();
        PartitionRegistration registration = offsets.partition(partition);
        ClusterImage.BrokerInfo leader = registration.hasLeader() ? image.broker(registration.leader()) : null;
        if (leader == null || leader.fenced()) {
            return Coordinator.unavailable("Partition " + partition + " of " + Topics.GROUP_METADATA_TOPIC + " has no leader");
        }
        return new Coordinator(Errors.NONE, null, leader.id(), leader.host(), leader.port());
    }
}
