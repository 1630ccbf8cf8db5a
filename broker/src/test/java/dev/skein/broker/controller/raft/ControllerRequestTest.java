package dev.skein.broker.controller.raft;

import dev.skein.broker.config.ConfigOp;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Requests forwarded to the active controller survive their binary form, a cancel (no target) included. */
class ControllerRequestTest {
    @Test
    void reassignmentElectionAndManualPlacementRequestsSurviveTheirBinaryForm() {
        TopicPartition tp = new TopicPartition("t", 3);
        List<ControllerRequest> all = List.of(
                new ControllerRequest.AlterReassignment(tp, List.of(2, 0, 1)),
                new ControllerRequest.AlterReassignment(tp, null),
                new ControllerRequest.ElectLeader(ElectionType.UNCLEAN.value, tp),
                new ControllerRequest.FetchMetadata(41, 500),
                new ControllerRequest.DescribeQuorum(),
                new ControllerRequest.ReadIndex(),
                new ControllerRequest.CreateTopicAssigned("placed", List.of(List.of(2, 1), List.of(1, 0)),
                        java.util.Map.of("retention.ms", "1000"), false),
                new ControllerRequest.CreatePartitionsAssigned("placed", 3, List.of(List.of(0, 2)), true),
                new ControllerRequest.IncrementalAlterTopicConfigs("placed", List.of(
                        new ConfigOp("retention.ms", ConfigOp.Kind.SET, "1000", null),
                        new ConfigOp("segment.ms", ConfigOp.Kind.DELETE, null, null),
                        new ConfigOp("cleanup.policy", ConfigOp.Kind.APPEND, "compact", "delete")), true),
                new ControllerRequest.IncrementalAlterBrokerConfigs("", List.of(
                        new ConfigOp("follower.replication.throttled.rate", ConfigOp.Kind.SET, "1000", null)), false));
        for (ControllerRequest r : all) {
            assertThat(ControllerRequest.decode(ControllerRequest.encode(r))).isEqualTo(r);
        }
    }

    /** A request type a controller does not know is refused by name, which a newer broker recognises to fall back. */
    @Test
    void anUnknownRequestTypeIsRefusedByName() {
        byte[] bytes = ControllerRequest.encode(new ControllerRequest.ReadIndex());
        bytes[1] = 99;
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ControllerRequest.decode(bytes))
                .hasMessageContaining("Unknown controller request type 99");
    }

    @Test
    void aRequestCarriesTheIdOfItsCallAndOneWithoutAnIdStillReads() {
        var request = new ControllerRequest.CreateTopic("orders", 3, (short) 2, java.util.Map.of(), false);
        var id = org.apache.kafka.common.Uuid.randomUuid();
        assertThat(ControllerRequest.decodeCall(ControllerRequest.encode(id, request)))
                .isEqualTo(new ControllerRequest.Call(id, request));
        assertThat(ControllerRequest.decodeCall(ControllerRequest.encode(request)))
                .isEqualTo(new ControllerRequest.Call(null, request));
    }

    @Test
    void aQuorumDescriptionSurvivesItsBinaryForm() {
        var quorum = new dev.skein.broker.controller.QuorumDescription(2, 7, 120, List.of(
                new dev.skein.broker.controller.QuorumDescription.Voter(0, org.apache.kafka.common.Uuid.randomUuid(), -1),
                new dev.skein.broker.controller.QuorumDescription.Voter(2, org.apache.kafka.common.Uuid.randomUuid(), 121)));
        assertThat(QuorumCodec.decode(QuorumCodec.encode(quorum))).isEqualTo(quorum);
    }
}
