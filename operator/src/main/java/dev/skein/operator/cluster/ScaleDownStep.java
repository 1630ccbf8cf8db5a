package dev.skein.operator.cluster;

import dev.skein.operator.kafka.ClusterAdmin;
import dev.skein.operator.kafka.KafkaAdmins;
import dev.skein.operator.kafka.KafkaCallException;
import dev.skein.operator.kafka.ReplicationThrottle;
import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The scale-down step of the cluster reconciler: reads what {@link ScaleDownPlan} needs, and does
 * what it decides. Reassign: throttle the moves at {@code spec.replicationThrottleBytesPerSecond}
 * ({@link ReplicationThrottle}) and start them; Wait: nothing; Shrink: clear the throttle, then
 * lower the StatefulSet's replicas (the StatefulSet removes the highest ordinals, the emptied
 * brokers). Stateless: every reconcile starts again from what the cluster reports, so an operator
 * restart in the middle resumes where the cluster is.
 */
final class ScaleDownStep {
    private static final Logger LOG = LoggerFactory.getLogger(ScaleDownStep.class);
    /** Most partitions whose reassignment one step starts; the rest follow once these are done. */
    static final int MAX_MOVES_PER_STEP = 100;

    /** The outcome for the status: the decision and the condition it sets (none for {@link ScaleDecision.None}). */
    record Outcome(ScaleDecision decision, boolean progressing, String reason, String message) {
        boolean refused() {
            return decision instanceof ScaleDecision.Refuse;
        }
    }

    private final KafkaAdmins admins;

    ScaleDownStep(KafkaAdmins admins) {
        this.admins = admins;
    }

    Outcome run(SkeinCluster cluster, ClusterNames names, int running, SkeinClusterReconciler.ClusterView view,
                KubernetesClient client) {
        int target = cluster.getSpec().getBrokers();
        if (running <= target) {
            return new Outcome(new ScaleDecision.None(), false, null, null);
        }
        String scaling = "scaling down " + running + " → " + target + " brokers: ";
        List<Integer> departing = ScaleDownPlan.departing(running, target);
        if (!view.reachable()) {
            return new Outcome(new ScaleDecision.Wait(0, 0), true, ScaleReason.ClusterUnreachable.name(),
                    scaling + "cannot read the cluster: " + view.error());
        }
        // the voter count the brokers run with: computed as for the running brokers (EffectiveBrokers)
        SkeinCluster runningCluster = client.getKubernetesSerialization().clone(cluster);
        runningCluster.getSpec().setBrokers(running);
        int voters = BrokerConfigMap.controllerVoters(runningCluster.getSpec());
        ScaleDecision decision;
        try {
            ClusterAdmin admin = new ClusterAdmin(admins.forBootstrap(names.bootstrapServers()),
                    admins.timeout().toMillis());
            decision = ScaleDownPlan.decide(new ScaleDownPlan.Input(running, target, voters, view.partitions(),
                    admin.reassignmentsInFlight(), admin.racks(), MAX_MOVES_PER_STEP));
            ReplicationThrottle throttle = new ReplicationThrottle(admins.forBootstrap(names.bootstrapServers()),
                    admins.timeout().toMillis());
            switch (decision) {
                case ScaleDecision.Reassign r -> {
                    long rate = cluster.getSpec().getReplicationThrottleBytesPerSecond() == null ? 0
                            : cluster.getSpec().getReplicationThrottleBytesPerSecond();
                    List<ReplicationThrottle.Move> moves = new ArrayList<>();
                    r.moves().forEach((p, next) -> moves.add(new ReplicationThrottle.Move(p.topic(), p.partition(),
                            p.replicas(), next.stream().filter(b -> !p.replicas().contains(b)).toList())));
                    throttle.set(rate, moves);
                    admin.reassign(r.moves());
                    LOG.info("SkeinCluster {}/{}: scale down: reassigning {} partitions off brokers {} (throttle {} B/s): {}",
                            names.namespace(), names.cluster(), r.moves().size(), departing,
                            rate <= 0 ? "none" : rate, describe(r.moves()));
                }
                case ScaleDecision.Shrink s -> {
                    var cleared = throttle.clear();
                    client.apps().statefulSets().inNamespace(names.namespace()).withName(names.statefulSet())
                            .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"replicas\":" + s.brokers() + "}}");
                    LOG.info("SkeinCluster {}/{}: scale down: brokers {} hold no replica; throttle cleared (topics {}); "
                            + "StatefulSet replicas {} → {}", names.namespace(), names.cluster(), departing, cleared,
                            running, s.brokers());
                }
                case ScaleDecision.Wait w -> LOG.info("SkeinCluster {}/{}: scale down waits: {} reassignments in flight, "
                        + "{} partitions on brokers {}", names.namespace(), names.cluster(), w.inFlight(), w.remaining(),
                        departing);
                case ScaleDecision.Refuse f -> LOG.info("SkeinCluster {}/{}: scale down refused ({}): {}",
                        names.namespace(), names.cluster(), f.reason(), f.message());
                case ScaleDecision.None n -> {
                }
            }
        } catch (KafkaCallException e) {
            return new Outcome(new ScaleDecision.Wait(0, 0), true, ScaleReason.ClusterUnreachable.name(),
                    scaling + e.getMessage());
        }
        return switch (decision) {
            case ScaleDecision.Reassign r -> new Outcome(r, true, ScaleReason.ScalingDown.name(), scaling + "moving "
                    + r.moves().size() + " partitions off brokers " + departing + ", " + r.remaining()
                    + " partitions have a replica there");
            case ScaleDecision.Wait w -> new Outcome(w, true, ScaleReason.ScalingDown.name(), scaling + w.inFlight()
                    + " reassignments in flight, " + w.remaining() + " partitions have a replica on brokers " + departing);
            case ScaleDecision.Shrink s -> new Outcome(s, true, ScaleReason.ScalingDown.name(), scaling + "brokers "
                    + departing + " hold no replica; removing their pods");
            case ScaleDecision.Refuse f -> new Outcome(f, false, f.reason().name(), f.message());
            case ScaleDecision.None n -> new Outcome(n, false, null, null);
        };
    }

    private static String describe(Map<PartitionReplicas, List<Integer>> moves) {
        List<String> out = new ArrayList<>();
        moves.forEach((p, next) -> out.add(p + " " + p.replicas() + "→" + next));
        return out.size() > 10 ? String.join(", ", out.subList(0, 10)) + ", ..." : String.join(", ", out);
    }
}
