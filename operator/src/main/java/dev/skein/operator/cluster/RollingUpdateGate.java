package dev.skein.operator.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * Picks the next broker of a rolling update, or says why none may restart now. Pure: the caller
 * passes what it read from Kubernetes (which pods are ready, which run an outdated spec) and from
 * the cluster (replicas and ISR per partition, the active controller).
 *
 * <p>Rules, in order:
 * <ol>
 *   <li>No broker needs a restart: {@link RollDecision.Done}.</li>
 *   <li>One at a time: if a broker that is not ready exists and it is not itself one to restart,
 *       or two or more brokers are not ready, wait ({@link RollReason#BrokerNotReady}). A broker that
 *       is down and outdated is restarted first: restarting it costs no availability.</li>
 *   <li>A ready broker that is a replica of a partition but not in its ISR is still catching up
 *       after the previous restart: wait ({@link RollReason#BrokerCatchingUp}).</li>
 *   <li>Candidates in order: not-ready ones first, then by node id, the active controller last
 *       (it is picked only when it is the only broker left to restart). The first candidate
 *       whose restart leaves every partition it hosts with at least min.insync.replicas in-sync
 *       replicas is restarted; if there is none, wait ({@link RollReason#MinInSyncReplicasAtRisk})
 *       naming the partition that blocks each candidate.</li>
 * </ol>
 */
public final class RollingUpdateGate {
    private RollingUpdateGate() {
    }

    /**
     * @param brokers          node ids of every broker of the cluster
     * @param ready            node ids whose pod is ready
     * @param needsRestart     node ids whose pod runs an outdated spec
     * @param partitions       every partition of the cluster
     * @param activeController node id of the active controller, if known
     */
    public static RollDecision next(Set<Integer> brokers, Set<Integer> ready, Set<Integer> needsRestart,
                                    List<PartitionReplicas> partitions, OptionalInt activeController) {
        Set<Integer> toRestart = new TreeSet<>(needsRestart);
        toRestart.retainAll(brokers);
        if (toRestart.isEmpty()) {
            return new RollDecision.Done();
        }
        Set<Integer> notReady = new TreeSet<>(brokers);
        notReady.removeAll(ready);
        if (notReady.size() > 1) {
            return new RollDecision.Wait(RollReason.BrokerNotReady,
                    "brokers " + notReady + " are not ready; restarting one at a time");
        }
        if (notReady.size() == 1 && !toRestart.containsAll(notReady)) {
            return new RollDecision.Wait(RollReason.BrokerNotReady,
                    "broker " + notReady.iterator().next() + " is not ready; restarting one at a time");
        }
        for (PartitionReplicas p : partitions) {
            for (int replica : p.replicas()) {
                if (ready.contains(replica) && !p.isr().contains(replica)) {
                    return new RollDecision.Wait(RollReason.BrokerCatchingUp,
                            "broker " + replica + " is not yet back in the ISR of " + p + " (ISR " + p.isr() + ")");
                }
            }
        }
        List<Integer> candidates = new ArrayList<>(toRestart);
        candidates.sort(Comparator.comparing((Integer b) -> ready.contains(b))
                .thenComparing(b -> activeController.isPresent() && activeController.getAsInt() == b)
                .thenComparing(b -> b));
        List<String> blocked = new ArrayList<>();
        for (int broker : candidates) {
            boolean isController = activeController.isPresent() && activeController.getAsInt() == broker;
            if (isController && candidates.size() > 1) {
                blocked.add("broker " + broker + " is the active controller and restarts last");
                continue;
            }
            Optional<String> risk = firstPartitionAtRisk(broker, partitions);
            if (risk.isEmpty()) {
                String why = !ready.contains(broker) ? "broker " + broker + " is not ready and outdated"
                        : "every partition of broker " + broker + " keeps min.insync.replicas without it";
                return new RollDecision.Restart(broker, why);
            }
            blocked.add(risk.get());
        }
        return new RollDecision.Wait(RollReason.MinInSyncReplicasAtRisk, String.join("; ", blocked));
    }

    /** The first partition hosted by {@code broker} whose ISR without it is below min.insync.replicas, described. */
    static Optional<String> firstPartitionAtRisk(int broker, List<PartitionReplicas> partitions) {
        for (PartitionReplicas p : partitions) {
            if (!p.replicas().contains(broker)) {
                continue;
            }
            List<Integer> isrWithout = p.isr().stream().filter(r -> r != broker).toList();
            if (isrWithout.size() < p.minInSyncReplicas()) {
                return Optional.of("restarting broker " + broker + " would leave " + p + " with ISR " + isrWithout
                        + ", below min.insync.replicas " + p.minInSyncReplicas());
            }
        }
        return Optional.empty();
    }
}
