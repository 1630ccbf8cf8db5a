package dev.skein.operator.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ClusterHealthTest {

    @Test
    void countsUnderReplicatedAndOfflinePartitionsAndWhichBrokersAreInEveryIsr() {
        List<PartitionReplicas> partitions = List.of(
                new PartitionReplicas("a", 0, List.of(0, 1, 2), List.of(0, 1, 2), 2),
                new PartitionReplicas("a", 1, List.of(1, 2, 0), List.of(1, 0), 2),
                new PartitionReplicas("b", 0, List.of(2), List.of(), 1));

        ClusterHealth health = ClusterHealth.of(3, partitions,
                Map.of(0, Map.entry("main-broker-0", "node-a"), 1, Map.entry("main-broker-1", "node-b")));

        assertThat(health.underReplicatedPartitions()).isEqualTo(2);
        assertThat(health.offlinePartitions()).isEqualTo(1);
        assertThat(health.brokers()).extracting(b -> b.getNodeId() + ":" + b.getPod() + "@" + b.getNode() + ":" + b.getInAllIsrs())
                .containsExactly("0:main-broker-0@node-a:true", "1:main-broker-1@node-b:true", "2:null@null:false");
    }

    @Test
    void reportsEachBrokersIncarnationWhereTheClusterNamesOne() {
        List<PartitionReplicas> partitions = List.of(new PartitionReplicas("a", 0, List.of(0, 1), List.of(0, 1), 1));

        ClusterHealth health = ClusterHealth.of(3, partitions, Map.of(), Map.of(0, "dir-0", 2, "dir-2"));

        assertThat(health.brokers()).extracting(b -> b.getNodeId() + ":" + b.getIncarnation())
                .containsExactly("0:dir-0", "1:null", "2:dir-2");
    }
}
