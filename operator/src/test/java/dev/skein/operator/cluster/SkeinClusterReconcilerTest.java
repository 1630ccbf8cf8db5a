package dev.skein.operator.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SkeinClusterReconcilerTest {

    private static Pod pod(String ready, String deletionTimestamp) {
        return new PodBuilder().withNewMetadata().withName("main-broker-0").withDeletionTimestamp(deletionTimestamp)
                .endMetadata().withNewStatus().addNewCondition().withType("Ready").withStatus(ready).endCondition()
                .endStatus().build();
    }

    @Test
    void terminatingPodCountsAsNotReadyForTheRollingGate() {
        assertThat(SkeinClusterReconciler.isReady(pod("True", null))).isTrue();
        assertThat(SkeinClusterReconciler.isReady(pod("False", null))).isFalse();
        assertThat(SkeinClusterReconciler.isReady(pod("True", "2026-01-01T00:00:00Z"))).isFalse();
        assertThat(SkeinClusterReconciler.isReady(new PodBuilder().withNewMetadata().endMetadata().build())).isFalse();
    }
}
