package dev.skein.broker.api;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.QuorumDescription;
import dev.skein.broker.controller.raft.QuorumVoter;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeQuorumRequestData;
import org.apache.kafka.common.message.DescribeQuorumResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.List;

/**
 * DescribeQuorum (API 55, {@code Admin.describeMetadataQuorum}, {@code kafka-metadata-quorum.sh}):
 * the voters of the controller quorum with their directory ids (v2), the other registered brokers
 * as observers with their log dir's directory id (the broker's incarnation), the leader, its epoch
 * and the high watermark of the metadata log, as this node's controller sees them. Kafka's single partition
 * {@code __cluster_metadata-0} stands for Skein's Raft group; anything else is UNKNOWN_TOPIC_OR_PARTITION.
 */
final class QuorumApi {
    private final Controller controller;
    private final BrokerConfig config;

    QuorumApi(Controller controller, BrokerConfig config) {
        this.controller = controller;
        this.config = config;
    }

    DescribeQuorumResponseData describe(DescribeQuorumRequestData request) {
        DescribeQuorumResponseData response = new DescribeQuorumResponseData();
        QuorumDescription quorum = controller.quorum();
        List<QuorumVoter> configured = QuorumVoter.parseAll(config.controllerQuorumVoters());
        if (quorum == null && configured.stream().noneMatch(v -> v.id() == config.nodeId()) && !configured.isEmpty()) {
            // a broker that is not a voter: the voters it is configured with, the active controller its
            // metadata names; it cannot know their directory ids or the quorum's epoch
            quorum = new QuorumDescription(controller.image().controllerId(), -1, -1, configured.stream()
                    .map(v -> new QuorumDescription.Voter(v.id(), Uuid.ZERO_UUID, -1)).toList());
        } else if (quorum == null) {
            // a single node: its own quorum of one
            quorum = new QuorumDescription(config.nodeId(), 0, -1, List.of(new QuorumDescription.Voter(config.nodeId(),
                    Uuid.ZERO_UUID, -1)));
        }
        for (DescribeQuorumRequestData.TopicData t : request.topics()) {
            DescribeQuorumResponseData.TopicData topic = new DescribeQuorumResponseData.TopicData().setTopicName(t.topicName());
            for (DescribeQuorumRequestData.PartitionData p : t.partitions()) {
                DescribeQuorumResponseData.PartitionData out = new DescribeQuorumResponseData.PartitionData()
                        .setPartitionIndex(p.partitionIndex());
                if (!Topic.CLUSTER_METADATA_TOPIC_NAME.equals(t.topicName()) || p.partitionIndex() != 0) {
                    out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("The controller quorum is " + Topic.CLUSTER_METADATA_TOPIC_NAME + "-0");
                } else if (quorum.leaderId() < 0) {
                    out.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code())
                            .setErrorMessage("This node does not know the active controller yet");
                } else {
                    out.setLeaderId(quorum.leaderId())
                            .setLeaderEpoch((int) Math.min(Integer.MAX_VALUE, quorum.leaderEpoch()))
                            .setHighWatermark(quorum.highWatermark())
                            .setCurrentVoters(voters(quorum))
                            .setObservers(observers(quorum));
                }
                topic.partitions().add(out);
            }
            response.topics().add(topic);
        }
        for (QuorumVoter v : QuorumVoter.parseAll(config.controllerQuorumVoters())) {
            DescribeQuorumResponseData.Node node = new DescribeQuorumResponseData.Node().setNodeId(v.id());
            node.listeners().add(new DescribeQuorumResponseData.Listener().setName(controllerListenerName())
                    .setHost(v.host()).setPort(v.port()));
            response.nodes().add(node);
        }
        return response;
    }

    private static List<DescribeQuorumResponseData.ReplicaState> voters(QuorumDescription quorum) {
        List<DescribeQuorumResponseData.ReplicaState> out = new ArrayList<>();
        for (QuorumDescription.Voter v : quorum.voters()) {
            out.add(new DescribeQuorumResponseData.ReplicaState().setReplicaId(v.nodeId())
                    .setReplicaDirectoryId(v.directoryId()).setLogEndOffset(v.logEndOffset())
                    .setLastFetchTimestamp(-1).setLastCaughtUpTimestamp(-1));
        }
        return out;
    }

    /**
     * The registered brokers that are not voters, as Kafka lists its brokers: each with the
     * directory id of its log dir, its incarnation (a broker back on an empty disk has a new one).
     */
    private List<DescribeQuorumResponseData.ReplicaState> observers(QuorumDescription quorum) {
        java.util.Set<Integer> voters = new java.util.HashSet<>();
        quorum.voters().forEach(v -> voters.add(v.nodeId()));
        List<DescribeQuorumResponseData.ReplicaState> out = new ArrayList<>();
        for (ClusterImage.BrokerInfo b : controller.image().brokers()) {
            if (!voters.contains(b.id())) {
                out.add(new DescribeQuorumResponseData.ReplicaState().setReplicaId(b.id())
                        .setReplicaDirectoryId(b.incarnation() == null ? Uuid.ZERO_UUID : b.incarnation())
                        .setLogEndOffset(-1).setLastFetchTimestamp(-1).setLastCaughtUpTimestamp(-1));
            }
        }
        return out;
    }

    private String controllerListenerName() {
        BrokerConfig.Listener l = config.controllerListener();
        return l == null ? "CONTROLLER" : l.name();
    }
}
