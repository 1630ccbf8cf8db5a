package dev.skein.operator.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Decides the next step of a scale down, or that there is none. Pure: the caller passes what runs
 * (the StatefulSet's replicas), what the spec asks for, the controller voter count, every partition
 * with its replicas and the reassignments in flight, as read from Kubernetes and the cluster.
 *
 * <p>A StatefulSet removes its highest ordinals, so brokers {@code target..running-1} depart. Rules,
 * in order:
 * <ol>
 *   <li>{@code target >= running}: {@link ScaleDecision.None} (adding brokers needs no plan).</li>
 *   <li>{@code target < voters}: {@link ScaleDecision.Refuse} ({@link ScaleReason#ControllerVoterRemoval}):
 *       voters are the lowest ordinals, so a departing broker would be a voter.</li>
 *   <li>A partition with more replicas (after any reassignment in flight) than {@code target}:
 *       {@link ScaleDecision.Refuse} ({@link ScaleReason#ReplicationFactorAboveBrokers}) naming the topics.</li>
 *   <li>Any reassignment in flight (ours or anyone's): {@link ScaleDecision.Wait}.</li>
 *   <li>No partition has a replica on a departing broker: {@link ScaleDecision.Shrink}.</li>
 *   <li>Otherwise {@link ScaleDecision.Reassign} of at most {@code maxMovesPerStep} partitions:
 *       each departing replica is replaced in place (so the preferred leader's position is kept)
 *       by a remaining broker not already a replica, preferring a rack the partition does not use
 *       yet, then the broker with the fewest leaders (for position 0) or replicas, then the lowest id.</li>
 * </ol>
 */
public final class ScaleDownPlan {
    /** A reassignment the cluster reports in flight: {@code removing} replicas are still listed in the partition's replicas. */
    public record InFlight(String topic, int partition, List<Integer> removing) {
        public InFlight {
            removing = List.copyOf(removing);
        }
    }

    /**
     * @param running         the StatefulSet's replicas now (brokers 0..running-1 exist)
     * @param target          spec.brokers
     * @param voters          how many of the lowest ordinals are controller voters
     * @param partitions      every partition of the cluster, internal topics included
     * @param inFlight        reassignments in flight
     * @param racks           rack per broker id, where known
     * @param maxMovesPerStep most partitions to reassign in one step
     */
    public record Input(int running, int target, int voters, List<PartitionReplicas> partitions,
                        List<InFlight> inFlight, Map<Integer, String> racks, int maxMovesPerStep) {
        public Input {
            partitions = List.copyOf(partitions);
            inFlight = List.copyOf(inFlight);
            racks = Map.copyOf(racks);
        }
    }

    private ScaleDownPlan() {
    }

    public static ScaleDecision decide(Input in) {
        if (in.target() >= in.running()) {
            return new ScaleDecision.None();
        }
        if (in.target() < in.voters()) {
            return new ScaleDecision.Refuse(ScaleReason.ControllerVoterRemoval, "spec.brokers " + in.target()
                    + " is below the " + in.voters() + " controller voters (brokers 0.." + (in.voters() - 1)
                    + "); scaling down never removes a voter");
        }
        Map<String, List<Integer>> removing = new HashMap<>();
        in.inFlight().forEach(f -> removing.put(f.topic() + "-" + f.partition(), f.removing()));
        Map<String, Integer> tooBig = new TreeMap<>();
        List<PartitionReplicas> onDeparting = new ArrayList<>();
        for (PartitionReplicas p : in.partitions()) {
            List<Integer> after = new ArrayList<>(p.replicas());
            after.removeAll(removing.getOrDefault(p.toString(), List.of()));
            if (after.size() > in.target()) {
                tooBig.merge(p.topic(), after.size(), Math::max);
            }
            if (p.replicas().stream().anyMatch(r -> r >= in.target())) {
                onDeparting.add(p);
            }
        }
        if (!tooBig.isEmpty()) {
            List<String> named = new ArrayList<>();
            tooBig.forEach((topic, rf) -> named.add(topic + " (" + rf + " replicas)"));
            return new ScaleDecision.Refuse(ScaleReason.ReplicationFactorAboveBrokers, "only " + in.target()
                    + " brokers would remain for " + String.join(", ", named)
                    + "; lower their replication factor first");
        }
        if (!in.inFlight().isEmpty()) {
            return new ScaleDecision.Wait(in.inFlight().size(), onDeparting.size());
        }
        if (onDeparting.isEmpty()) {
            return new ScaleDecision.Shrink(in.target());
        }
        return new ScaleDecision.Reassign(moves(in, onDeparting), onDeparting.size());
    }

    private static Map<PartitionReplicas, List<Integer>> moves(Input in, List<PartitionReplicas> onDeparting) {
        int target = in.target();
        Map<Integer, Integer> replicas = new HashMap<>();
        Map<Integer, Integer> leaders = new HashMap<>();
        for (int b = 0; b < target; b++) {
            replicas.put(b, 0);
            leaders.put(b, 0);
        }
        for (PartitionReplicas p : in.partitions()) {
            for (int i = 0; i < p.replicas().size(); i++) {
                int r = p.replicas().get(i);
                if (r < target) {
                    replicas.merge(r, 1, Integer::sum);
                    if (i == 0) {
                        leaders.merge(r, 1, Integer::sum);
                    }
                }
            }
        }
        List<PartitionReplicas> ordered = new ArrayList<>(onDeparting);
        ordered.sort(Comparator.comparing(PartitionReplicas::topic).thenComparingInt(PartitionReplicas::partition));
        Map<PartitionReplicas, List<Integer>> out = new LinkedHashMap<>();
        for (PartitionReplicas p : ordered.subList(0, Math.min(ordered.size(), in.maxMovesPerStep()))) {
            List<Integer> next = new ArrayList<>(p.replicas());
            for (int i = 0; i < next.size(); i++) {
                if (next.get(i) < target) {
                    continue;
                }
                Set<String> usedRacks = new HashSet<>();
                for (int r : next) {
                    if (r < target && in.racks().get(r) != null) {
                        usedRacks.add(in.racks().get(r));
                    }
                }
                boolean leader = i == 0;
                Set<Integer> candidates = new TreeSet<>();
                for (int b = 0; b < target; b++) {
                    if (!next.contains(b)) {
                        candidates.add(b);
                    }
                }
                int chosen = candidates.stream().min(Comparator
                        .comparing((Integer b) -> in.racks().get(b) != null && usedRacks.contains(in.racks().get(b)))
                        .thenComparing(b -> leader ? leaders.get(b) : 0)
                        .thenComparing(replicas::get)
                        .thenComparing(b -> b)).orElseThrow();
                next.set(i, chosen);
                replicas.merge(chosen, 1, Integer::sum);
                if (leader) {
                    leaders.merge(chosen, 1, Integer::sum);
                }
            }
            out.put(p, next);
        }
        return out;
    }

    /** The brokers that leave: the highest ordinals, {@code target..running-1}. */
    public static List<Integer> departing(int running, int target) {
        List<Integer> out = new ArrayList<>();
        for (int b = target; b < running; b++) {
            out.add(b);
        }
        return out;
    }
}
