package dev.skein.operator.kafka;

import dev.skein.operator.cluster.PartitionReplicas;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ReplicationThrottleAdminTest {

    @Test
    void followerListNamesTheReplacedBrokerAndLeaderListTheOtherReplicasOfItsPartitionsOnly() {
        List<PartitionReplicas> partitions = List.of(
                new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(0, 2), 2),
                new PartitionReplicas("orders", 1, List.of(2, 0, 1), List.of(2, 0), 2),
                new PartitionReplicas("orders", 2, List.of(0, 2), List.of(0, 2), 1),
                new PartitionReplicas("audit", 0, List.of(1), List.of(), 1),
                new PartitionReplicas("other", 0, List.of(0, 2), List.of(0, 2), 1));

        Map<String, List<String>> lists = ReplicationThrottleAdmin.topicReplicas(1, partitions);

        assertThat(lists).containsExactly(
                Map.entry("audit", List.of("", "0:1")),
                Map.entry("orders", List.of("0:0,0:2,1:0,1:2", "0:1,1:1")));
    }
}
