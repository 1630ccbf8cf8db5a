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
import dev.skein.operator.kafka.ClusterAdmin;
import dev.skein.operator.kafka.KafkaAdmins;
import dev.skein.operator.kafka.KafkaCallException;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Keeps a SkeinCluster's objects (ConfigMap, Services, ServiceAccount, StatefulSet, PDB) as its
 * spec says, through the declared dependents, and reports the brokers' readiness and the bootstrap
 * address in the status. Objects are owned by the SkeinCluster, so deleting it deletes them
 * (claims follow {@code storage.deleteClaim}).
 *
 * <p>A change of the brokers' pod template (config, image, resources...) is rolled out one broker
 * at a time as {@link RollingUpdateGate} allows, reported in the Progressing condition.
 *
 * <p>A lower {@code spec.brokers} is a scale down ({@link ScaleDownStep}): replicas leave the
 * departing brokers first, and only then does the StatefulSet lose them.
 *
 * <p>Not yet here (issue 5): node loss and broker replacement.
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

    static final String REVISION_LABEL = "controller-revision-hash";
    static final String POD_INDEX_LABEL = "apps.kubernetes.io/pod-index";
    private static final Duration ROLL_POLL = Duration.ofSeconds(5);
    private static final Duration NODE_LOSS_STEP_POLL = Duration.ofSeconds(1);

    private final KafkaAdmins admins;
    private final Clock clock;
    private final ScaleDownStep scaleDown;
    private final NodeLossReplacer nodeLoss;

    public SkeinClusterReconciler(KafkaAdmins admins, Clock clock) {
        this(admins, clock, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    }

    public SkeinClusterReconciler(KafkaAdmins admins, Clock clock, io.micrometer.core.instrument.MeterRegistry registry) {
        this.admins = admins;
        this.clock = clock;
        this.scaleDown = new ScaleDownStep(admins);
        this.nodeLoss = new NodeLossReplacer(admins, clock, registry);
    }

    @Override
    public UpdateControl<SkeinCluster> reconcile(SkeinCluster cluster, Context<SkeinCluster> context) {
        ClusterNames names = new ClusterNames(cluster);
        Optional<StatefulSet> sts = context.getSecondaryResources(StatefulSet.class).stream()
                .filter(s -> s.getMetadata().getName().equals(names.statefulSet())).findFirst();
        // while a scale down is pending the departing brokers still run and count (EffectiveBrokers)
        int running = sts.isPresent() ? EffectiveBrokers.running(cluster, context) : 0;
        int brokers = Math.max(cluster.getSpec().getBrokers(), running);
        int ready = sts.map(s -> s.getStatus() == null || s.getStatus().getReadyReplicas() == null ? 0
                : s.getStatus().getReadyReplicas()).orElse(0);
        List<Pod> pods = context.getClient().pods().inNamespace(names.namespace()).withLabels(names.selector()).list()
                .getItems();
        Optional<ClusterView> view = sts.isPresent() ? Optional.of(readCluster(names)) : Optional.empty();
        Optional<RollDecision> roll = sts.flatMap(s -> rollingUpdate(brokers, names, s, pods, view.orElseThrow(),
                context.getClient()));
        ScaleDownStep.Outcome scale = view.isPresent() ? scaleDown.run(cluster, names, running, view.get(),
                context.getClient()) : new ScaleDownStep.Outcome(new ScaleDecision.None(), false, null, null);
        SkeinClusterStatus old = cluster.getStatus() == null ? new SkeinClusterStatus() : cluster.getStatus();
        SkeinClusterStatus status = new SkeinClusterStatus();
        long generation = cluster.getMetadata().getGeneration();
        status.setObservedGeneration(generation);
        status.setBootstrapServers(names.bootstrapServers());
        status.setReadyBrokers(ready);
        if (view.isPresent() && view.get().reachable()) {
            Map<Integer, Map.Entry<String, String>> podsById = new HashMap<>();
            for (Pod pod : pods) {
                String index = pod.getMetadata().getLabels().get(POD_INDEX_LABEL);
                if (index != null) {
                    podsById.put(Integer.parseInt(index), Map.entry(pod.getMetadata().getName(),
                            pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName()));
                }
            }
            // a voter's directory id is known only when a voter answered DescribeQuorum: else the last seen
            Map<Integer, String> incarnations = new HashMap<>(view.get().incarnations());
            if (old.getBrokers() != null) {
                old.getBrokers().stream().filter(b -> b.getNodeId() != null && b.getIncarnation() != null)
                        .forEach(b -> incarnations.putIfAbsent(b.getNodeId(), b.getIncarnation()));
            }
            ClusterHealth health = ClusterHealth.of(brokers, view.get().partitions(), podsById, incarnations);
            status.setUnderReplicatedPartitions(health.underReplicatedPartitions());
            status.setOfflinePartitions(health.offlinePartitions());
            status.setBrokers(health.brokers());
            status.setActiveController(view.get().controller().isPresent() ? view.get().controller().getAsInt() : null);
        } else {
            // the cluster cannot be asked now: keep what was last seen
            status.setUnderReplicatedPartitions(old.getUnderReplicatedPartitions());
            status.setOfflinePartitions(old.getOfflinePartitions());
            status.setBrokers(old.getBrokers());
            status.setActiveController(old.getActiveController());
        }
        boolean allReady = ready >= brokers;
        ClusterReason reason = allReady ? ClusterReason.BrokersReady : ClusterReason.BrokersNotReady;
        String message = ready + "/" + brokers + " brokers ready";
        if (!allReady) {
            // a cause the user must fix (an image, a StorageClass) is named instead of only counted
            Optional<BrokerPodProblems.Problem> problem = BrokerPodProblems.find(pods,
                    cluster.getSpec().getStorage() == null ? null : cluster.getSpec().getStorage().getStorageClassName(),
                    name -> storageClassExists(context.getClient(), name));
            if (problem.isPresent()) {
                reason = problem.get().reason();
                message = message + ": " + problem.get().message();
                // a Warning Event when the cause first shows (not on every reconcile while it lasts)
                String before = Conditions.find(old.getConditions(), Conditions.READY).map(c -> c.getReason()).orElse(null);
                if (!reason.name().equals(before)) {
                    new ClusterEvents(context.getClient(), clock).warning(cluster, reason.name(), problem.get().message());
                }
            }
        }
        if (scale.refused()) {
            // the spec cannot be realized: not Ready, with the refusal's reason; nothing was changed
            status.setConditions(Conditions.set(old.getConditions(), Conditions.READY, false, scale.reason(),
                    message + "; " + scale.message(), generation, clock.instant()));
        } else {
            status.setConditions(Conditions.set(old.getConditions(), Conditions.READY, allReady, reason.name(), message,
                    generation, clock.instant()));
        }
        if (!status.getConditions().equals(old.getConditions()) || !Integer.valueOf(ready).equals(old.getReadyBrokers())) {
            LOG.info("SkeinCluster {}/{}: {}", names.namespace(), names.cluster(), message);
        }
        boolean rolling = false;
        if (scale.reason() != null) {
            // a scale down under way (or refused) says so in Progressing, before any rolling update
            rolling = scale.progressing();
            status.setConditions(Conditions.set(status.getConditions(), Conditions.PROGRESSING, scale.progressing(),
                    scale.reason(), scale.message(), generation, clock.instant()));
        } else if (roll.isPresent()) {
            RollDecision d = roll.get();
            rolling = !(d instanceof RollDecision.Done);
            String[] reasonAndMessage = switch (d) {
                case RollDecision.Restart r -> new String[]{"RollingUpdate", "restarting broker " + r.brokerId()
                        + " with the new configuration: " + r.why()};
                case RollDecision.Wait w -> new String[]{w.reason().name(), "rolling update waits: " + w.message()};
                case RollDecision.Done done -> new String[]{"UpToDate", "every broker runs the current configuration"};
            };
            status.setConditions(Conditions.set(status.getConditions(), Conditions.PROGRESSING, rolling,
                    reasonAndMessage[0], reasonAndMessage[1], generation, clock.instant()));
        } else {
            Conditions.find(old.getConditions(), Conditions.PROGRESSING).ifPresent(c -> status.getConditions().add(c));
        }
        Optional<Duration> nodeLossPoll = Optional.empty();
        if (sts.isPresent()) {
            NodeLossAction loss = nodeLoss.reconcile(cluster, pods, view.filter(ClusterView::reachable)
                    .map(ClusterView::partitions), context.getClient(), Conditions.find(old.getConditions(),
                    Conditions.DEGRADED).map(io.fabric8.kubernetes.api.model.Condition::getReason));
            status.setConditions(Conditions.set(status.getConditions(), Conditions.DEGRADED, loss.degraded(),
                    loss.reason().name(), loss.message(), generation, clock.instant()));
            if (loss.degraded()) {
                // a step just taken: look again soon for the next one
                nodeLossPoll = Optional.of(switch (loss) {
                    case NodeLossAction.Wait w -> w.retryAfter() != null ? w.retryAfter().plusSeconds(1) : ROLL_POLL;
                    case NodeLossAction.Refuse r -> ROLL_POLL;
                    default -> NODE_LOSS_STEP_POLL;
                });
            }
        } else {
            Conditions.find(old.getConditions(), Conditions.DEGRADED).ifPresent(c -> status.getConditions().add(c));
        }
        cluster.setStatus(status);
        UpdateControl<SkeinCluster> control = UpdateControl.patchStatus(cluster);
        Optional<Duration> poll = rolling ? Optional.of(ROLL_POLL) : Optional.empty();
        if (nodeLossPoll.isPresent() && (poll.isEmpty() || nodeLossPoll.get().compareTo(poll.get()) < 0)) {
            poll = nodeLossPoll;
        }
        return poll.map(control::rescheduleAfter).orElse(control);
    }

    /**
     * The rolling-update step: pods whose StatefulSet revision is not the update revision run an
     * outdated spec; {@link RollingUpdateGate} picks the one to restart (by deleting its pod, which
     * the StatefulSet recreates from the new template) or says why none may go now. Empty while the
     * StatefulSet controller has not yet seen the current spec.
     */
    /** Whether the StorageClass exists; when the operator may not read StorageClasses, it assumes so. */
    private static boolean storageClassExists(KubernetesClient client, String name) {
        try {
            return client.storage().v1().storageClasses().withName(name).get() != null;
        } catch (KubernetesClientException e) {
            return true;
        }
    }

    /** Partitions, ISRs and the active controller as the cluster reports them, or why it could not be asked. */
    private ClusterView readCluster(ClusterNames names) {
        try {
            ClusterAdmin admin = new ClusterAdmin(admins.forBootstrap(names.bootstrapServers()), admins.timeout().toMillis());
            return new ClusterView(admin.partitions(), admin.activeController(), admin.incarnations(), null);
        } catch (KafkaCallException e) {
            return new ClusterView(List.of(), OptionalInt.empty(), Map.of(), e.getMessage());
        }
    }

    /** What the cluster said; {@code error} is set (and the rest empty) when it could not be asked. */
    record ClusterView(List<PartitionReplicas> partitions, OptionalInt controller, Map<Integer, String> incarnations,
                       String error) {
        boolean reachable() {
            return error == null;
        }
    }

    private Optional<RollDecision> rollingUpdate(int brokerCount, ClusterNames names, StatefulSet sts,
                                                 List<Pod> pods, ClusterView view, KubernetesClient client) {
        if (sts.getStatus() == null || sts.getStatus().getUpdateRevision() == null
                || !Objects.equals(sts.getStatus().getObservedGeneration(), sts.getMetadata().getGeneration())) {
            return Optional.empty();
        }
        String revision = sts.getStatus().getUpdateRevision();
        Set<Integer> brokers = new TreeSet<>();
        for (int i = 0; i < brokerCount; i++) {
            brokers.add(i);
        }
        Set<Integer> ready = new TreeSet<>();
        Set<Integer> outdated = new TreeSet<>();
        for (Pod pod : pods) {
            String index = pod.getMetadata().getLabels().get(POD_INDEX_LABEL);
            if (index == null) {
                continue;
            }
            int node = Integer.parseInt(index);
            // a terminating pod is a restart under way, not one still to do (and not ready either)
            if (!revision.equals(pod.getMetadata().getLabels().get(REVISION_LABEL))
                    && pod.getMetadata().getDeletionTimestamp() == null) {
                outdated.add(node);
            }
            if (isReady(pod)) {
                ready.add(node);
            }
        }
        if (outdated.isEmpty()) {
            boolean restarting = pods.stream().anyMatch(p -> p.getMetadata().getDeletionTimestamp() != null)
                    || pods.size() < brokerCount;
            return Optional.of(restarting && sts.getStatus().getCurrentRevision() != null
                    && !revision.equals(sts.getStatus().getCurrentRevision())
                    ? new RollDecision.Wait(RollReason.BrokerNotReady, "the last restarted broker is coming back")
                    : new RollDecision.Done());
        }
        RollDecision decision = view.reachable()
                ? RollingUpdateGate.next(brokers, ready, outdated, view.partitions(), view.controller())
                : new RollDecision.Wait(RollReason.ClusterUnreachable, view.error());
        if (decision instanceof RollDecision.Restart restart) {
            LOG.info("SkeinCluster {}/{}: rolling update: restarting broker {} ({}); outdated brokers {}",
                    names.namespace(), names.cluster(), restart.brokerId(), restart.why(), outdated);
            client.pods().inNamespace(names.namespace()).withName(names.pod(restart.brokerId())).delete();
        } else if (decision instanceof RollDecision.Wait wait) {
            LOG.info("SkeinCluster {}/{}: rolling update waits ({}): {}", names.namespace(), names.cluster(),
                    wait.reason(), wait.message());
        }
        return Optional.of(decision);
    }

    /** Ready and not being deleted: a terminating broker is as good as gone for the gate. */
    static boolean isReady(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null && pod.getStatus() != null
                && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }
}
