package dev.skein.broker.api;

import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;

import java.util.ArrayList;
import java.util.List;

/**
 * FindCoordinator: this broker coordinates every group (one broker holds every partition of
 * {@code __consumer_offsets}). Transaction and share coordinators are not offered.
 */
final class GroupApi {
    private final int nodeId;

    GroupApi(int nodeId) {
        this.nodeId = nodeId;
    }

    FindCoordinatorResponseData findCoordinator(FindCoordinatorRequestData request, short version, ClusterImage image) {
        ClusterImage.BrokerInfo self = image.broker(nodeId);
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (version < 4) {
            Coordinator c = coordinator(request.keyType(), self);
            return response.setErrorCode(c.error.code()).setErrorMessage(c.message)
                    .setNodeId(c.nodeId).setHost(c.host).setPort(c.port);
        }
        List<FindCoordinatorResponseData.Coordinator> out = new ArrayList<>();
        for (String key : request.coordinatorKeys()) {
            Coordinator c = coordinator(request.keyType(), self);
            out.add(new FindCoordinatorResponseData.Coordinator().setKey(key)
                    .setErrorCode(c.error.code()).setErrorMessage(c.message)
                    .setNodeId(c.nodeId).setHost(c.host).setPort(c.port));
        }
        return response.setCoordinators(out);
    }

    private record Coordinator(Errors error, String message, int nodeId, String host, int port) {
    }

    private static Coordinator coordinator(byte keyType, ClusterImage.BrokerInfo self) {
        if (keyType == FindCoordinatorRequest.CoordinatorType.GROUP.id()) {
            return new Coordinator(Errors.NONE, null, self.id(), self.host(), self.port());
        }
        String what = keyType == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id() ? "transactions" : "share groups";
        return new Coordinator(Errors.INVALID_REQUEST, "Skein does not support " + what + " yet", -1, "", -1);
    }
}
