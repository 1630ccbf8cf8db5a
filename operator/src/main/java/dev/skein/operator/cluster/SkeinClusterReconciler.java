package dev.skein.operator.cluster;

import dev.skein.operator.model.Conditions;
import dev.skein.operator.model.SkeinCluster;
import dev.skein.operator.model.SkeinClusterStatus;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;

/**
 * Keeps a SkeinCluster's objects (ConfigMap, Services, ServiceAccount, StatefulSet, PDB) as its
 * spec says, through the declared dependents, and reports the brokers' readiness and the bootstrap
 * address in the status. Objects are owned by the SkeinCluster, so deleting it deletes them
 * (claims follow {@code storage.deleteClaim}).
 *
 * <p>Not yet here (issue 5): the gated rolling restart ({@link RollingUpdateGate} decides it), scale
 * down with reassignment, per-broker state and partition counts from the Admin client, node loss.
 */
@ControllerConfiguration(name = SkeinClusterReconciler.NAME)
@Workflow(dependents = {
        @Dependent(name = "config", type = ClusterDependents.ConfigMapDependent.class),
        @Dependent(name = "headless", type = ClusterDependents.HeadlessServiceDependent.class),
        @Dependent(name = "bootstrap", type = ClusterDependents.BootstrapServiceDependent.class),
        @Dependent(name = "serviceaccount", type = ClusterDependents.ServiceAccountDependent.class),
        @Dependent(name = "statefulset", type = ClusterDependents.StatefulSetDependent.class,
                dependsOn = {"config", "headless", "serviceaccount"}),
        @Dependent(name = "pdb", type = ClusterDependents.PodDisruptionBudgetDependent.class)
})
public final class SkeinClusterReconciler implements Reconciler<SkeinCluster> {
    public static final String NAME = "skeincluster";
    private static final Logger LOG = LoggerFactory.getLogger(SkeinClusterReconciler.class);

    private final Clock clock;

    public SkeinClusterReconciler(Clock clock) {
        this.clock = clock;
    }

    @Override
    public UpdateControl<SkeinCluster> reconcile(SkeinCluster cluster, Context<SkeinCluster> context) {
        ClusterNames names = new ClusterNames(cluster);
        int brokers = cluster.getSpec().getBrokers();
        int ready = context.getSecondaryResources(StatefulSet.class).stream()
                .filter(s -> s.getMetadata().getName().equals(names.statefulSet()))
                .map(s -> s.getStatus() == null || s.getStatus().getReadyReplicas() == null ? 0
                        : s.getStatus().getReadyReplicas())
                .findFirst().orElse(0);
        SkeinClusterStatus old = cluster.getStatus() == null ? new SkeinClusterStatus() : cluster.getStatus();
        SkeinClusterStatus status = new SkeinClusterStatus();
        long generation = cluster.getMetadata().getGeneration();
        status.setObservedGeneration(generation);
        status.setBootstrapServers(names.bootstrapServers());
        status.setReadyBrokers(ready);
        boolean allReady = ready >= brokers;
        ClusterReason reason = allReady ? ClusterReason.BrokersReady : ClusterReason.BrokersNotReady;
        String message = ready + "/" + brokers + " brokers ready";
        status.setConditions(Conditions.set(old.getConditions(), Conditions.READY, allReady, reason.name(), message,
                generation, clock.instant()));
        if (!status.getConditions().equals(old.getConditions()) || !Integer.valueOf(ready).equals(old.getReadyBrokers())) {
            LOG.info("SkeinCluster {}/{}: {}", names.namespace(), names.cluster(), message);
        }
        cluster.setStatus(status);
        return UpdateControl.patchStatus(cluster);
    }
}
