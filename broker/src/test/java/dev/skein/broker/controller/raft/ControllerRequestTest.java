package dev.skein.broker.controller.raft;

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
                new ControllerRequest.CreateTopicAssigned("placed", List.of(List.of(2, 1), List.of(1, 0)),
                        java.util.Map.of("retention.ms", "1000"), false),
                new ControllerRequest.CreatePartitionsAssigned("placed", 3, List.of(List.of(0, 2)), true));
        for (ControllerRequest r : all) {
            assertThat(ControllerRequest.decode(ControllerRequest.encode(r))).isEqualTo(r);
        }
    }
}
