package dev.skein.operator.cluster;

import dev.skein.operator.model.NodeLossSpec;
import dev.skein.operator.model.SkeinCluster;
import dev.skein.operator.model.SkeinClusterSpec;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The parts of the replacer that turn Kubernetes objects into the decision's facts. */
class NodeLossReplacerTest {

    private static PersistentVolume pv(String key, String... values) {
        return new PersistentVolumeBuilder().withNewMetadata().withName("pv").endMetadata().withNewSpec()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey(key)
                .withOperator("In").withValues(values).endMatchExpression().endNodeSelectorTerm().endRequired()
                .endNodeAffinity().endSpec().build();
    }

    @Test
    void aVolumePinnedToOneHostnameIsNodeLocalAndAZoneOrNetworkVolumeIsNot() {
        assertThat(NodeLossReplacer.localNode(pv("kubernetes.io/hostname", "node-2"))).isEqualTo("node-2");
        assertThat(NodeLossReplacer.localNode(pv("topology.kubernetes.io/zone", "zone-a"))).isNull();
        assertThat(NodeLossReplacer.localNode(pv("kubernetes.io/hostname", "node-1", "node-2"))).isNull();
        assertThat(NodeLossReplacer.localNode(new PersistentVolumeBuilder().withNewSpec().endSpec().build())).isNull();
    }

    @Test
    void aNodeIsLostSinceItsReadyConditionLastChanged() {
        NodeLossDecision.Node unknown = NodeLossReplacer.node(new NodeBuilder().withNewMetadata().withName("n1")
                .endMetadata().withNewStatus().addNewCondition().withType("Ready").withStatus("Unknown")
                .withLastTransitionTime("2026-11-29T12:00:00Z").endCondition().endStatus().build());
        NodeLossDecision.Node noStatus = NodeLossReplacer.node(new NodeBuilder().withNewMetadata().withName("n2")
                .endMetadata().build());

        assertThat(unknown).isEqualTo(new NodeLossDecision.Node("n1", false, Instant.parse("2026-11-29T12:00:00Z")));
        assertThat(noStatus.ready()).isFalse();
    }

    @Test
    void goneSinceAnnotationRoundTripsAndSkipsAnEntryThatDoesNotParse() {
        Map<String, Instant> gone = new LinkedHashMap<>();
        gone.put("n1", Instant.parse("2026-11-29T12:00:00Z"));
        gone.put("n2", Instant.parse("2026-11-29T12:00:05Z"));

        String text = NodeLossReplacer.formatGoneSince(gone);

        assertThat(text).isEqualTo("n1=2026-11-29T12:00:00Z,n2=2026-11-29T12:00:05Z");
        assertThat(NodeLossReplacer.parseGoneSince(text)).isEqualTo(gone);
        assertThat(NodeLossReplacer.parseGoneSince("n1=yesterday,n2=2026-11-29T12:00:05Z"))
                .containsOnlyKeys("n2");
        assertThat(NodeLossReplacer.formatGoneSince(Map.of())).isNull();
    }

    @Test
    void settingsDefaultToReplacingAfterFiveMinutesWithoutAThrottle() {
        SkeinCluster cluster = new SkeinCluster();
        SkeinClusterSpec spec = new SkeinClusterSpec();
        spec.setBrokers(5);
        cluster.setSpec(spec);

        assertThat(NodeLossReplacer.settings(cluster)).isEqualTo(
                new NodeLossDecision.Settings(true, Duration.ofSeconds(300), true, 0));
        assertThat(NodeLossReplacer.voters(cluster)).isEqualTo(Set.of(0, 1, 2));

        NodeLossSpec nodeLoss = new NodeLossSpec();
        nodeLoss.setTimeoutSeconds(45);
        nodeLoss.setReplaceLocalVolumes(false);
        spec.setNodeLoss(nodeLoss);
        spec.setReplicationThrottleBytesPerSecond(2_000_000L);
        assertThat(NodeLossReplacer.settings(cluster)).isEqualTo(
                new NodeLossDecision.Settings(true, Duration.ofSeconds(45), false, 2_000_000));
    }

    @Test
    void theRecoveryThrottlesTheReplacedBrokersReplicasFetchingFromTheOthers() {
        java.util.List<PartitionReplicas> partitions = java.util.List.of(
                new PartitionReplicas("orders", 0, java.util.List.of(0, 1, 2), java.util.List.of(0, 2), 2),
                new PartitionReplicas("orders", 1, java.util.List.of(2, 0), java.util.List.of(2, 0), 1),
                new PartitionReplicas("audit", 0, java.util.List.of(1), java.util.List.of(), 1));

        assertThat(NodeLossReplacer.recoveryMoves(1, partitions)).containsExactly(
                new dev.skein.operator.kafka.ReplicationThrottle.Move("orders", 0, java.util.List.of(0, 2),
                        java.util.List.of(1)),
                new dev.skein.operator.kafka.ReplicationThrottle.Move("audit", 0, java.util.List.of(),
                        java.util.List.of(1)));
    }

    @Test
    void annotationValuesAreEscapedAsJsonStrings() {
        assertThat(NodeLossReplacer.json("a\"b\\c\n")).isEqualTo("\"a\\\"b\\\\c\\u000a\"");
    }
}
