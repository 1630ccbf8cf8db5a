package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

/** The PodDisruptionBudget that lets a node drain take at most {@code maxUnavailable} brokers (default 1). */
public final class BrokerPodDisruptionBudget {
    private BrokerPodDisruptionBudget() {
    }

    public static PodDisruptionBudget desired(SkeinCluster cluster) {
        ClusterNames names = new ClusterNames(cluster);
        Integer max = cluster.getSpec().getPodDisruptionBudget() == null ? null
                : cluster.getSpec().getPodDisruptionBudget().getMaxUnavailable();
        return new PodDisruptionBudgetBuilder()
                .withMetadata(names.metadata(names.podDisruptionBudget(), cluster))
                .withNewSpec()
                .withMaxUnavailable(new IntOrString(max == null ? 1 : max))
                .withNewSelector().withMatchLabels(names.selector()).endSelector()
                .endSpec().build();
    }
}
