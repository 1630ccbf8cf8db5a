package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.reconciler.Context;

import java.util.Optional;

/**
 * How many brokers the owned objects are built for: {@code spec.brokers}, except while a scale
 * down is pending, when the StatefulSet still runs more. Then the StatefulSet keeps its replicas
 * and the ConfigMap keeps the departing brokers' files (and the voter count stays what it was):
 * the dependents never lower the broker count. Only the reconciler's scale-down step does, once
 * {@link ScaleDownPlan} says the departing brokers hold no replica.
 */
final class EffectiveBrokers {
    private EffectiveBrokers() {
    }

    /**
     * The StatefulSet's replicas, 0 without one. A cached count above the spec's is confirmed with
     * a read from the API server: right after the scale-down step lowered the replicas, a stale
     * cache must not make the dependent apply the old count again.
     */
    static int running(SkeinCluster cluster, Context<SkeinCluster> context) {
        ClusterNames names = new ClusterNames(cluster);
        Optional<StatefulSet> cached = context.getSecondaryResources(StatefulSet.class).stream()
                .filter(s -> s.getMetadata().getName().equals(names.statefulSet())).findFirst();
        int replicas = cached.map(EffectiveBrokers::replicas).orElse(0);
        if (replicas > cluster.getSpec().getBrokers()) {
            StatefulSet live = context.getClient().apps().statefulSets().inNamespace(names.namespace())
                    .withName(names.statefulSet()).get();
            replicas = live == null ? 0 : replicas(live);
        }
        return replicas;
    }

    static int replicas(StatefulSet sts) {
        return sts.getSpec() == null || sts.getSpec().getReplicas() == null ? 0 : sts.getSpec().getReplicas();
    }

    /** The cluster as the owned objects are built for: a copy with the running count while a scale down is pending. */
    static SkeinCluster of(SkeinCluster cluster, Context<SkeinCluster> context) {
        int running = running(cluster, context);
        if (running <= cluster.getSpec().getBrokers()) {
            return cluster;
        }
        SkeinCluster copy = context.getClient().getKubernetesSerialization().clone(cluster);
        copy.getSpec().setBrokers(running);
        return copy;
    }
}
