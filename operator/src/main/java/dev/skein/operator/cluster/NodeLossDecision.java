package dev.skein.operator.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Decides the next step of replacing a broker whose Kubernetes node is lost, or why none may be
 * taken. Pure: the caller passes what it read (nodes, the brokers' pods and claims, partitions and
 * ISRs, the progress annotation) and the time; it applies the one action returned and then writes
 * {@link Result#next()} as the progress annotation.
 *
 * <p>Rules, in order:
 * <ol>
 *   <li>A replacement under way (the progress annotation) is continued, step by step, each step
 *       checked against what is observed so that a repeated step after an operator restart is
 *       harmless: set the recovery throttle, delete the claim (node-local volume, by UID), force-delete
 *       the pod (by UID), wait until the new pod is ready, wait until every ISR is full, clear the
 *       throttle. If the node comes back before anything was deleted, it is called off.</li>
 *   <li>A broker's node is the node of its pod, or, for a pod not scheduled, the node its
 *       node-local volume is bound to. The node is lost when it is gone or its Ready condition is
 *       not True; since when is the Ready condition's transition time (for a gone node: when the
 *       operator first saw it gone, {@link #goneSince}).</li>
 *   <li>No lost node: {@link NodeLossAction.Healthy}. Replacement disabled: refuse. Brokers on two
 *       or more lost nodes: refuse ({@link NodeLossReason#MultipleNodesLost}). Lost for less than
 *       the timeout: wait until it expires.</li>
 *   <li>One broker at a time (the lowest node id on the lost node). Refuse when it is a controller
 *       voter and the other voters that are ready are not a majority of all voters
 *       ({@link NodeLossReason#QuorumAtRisk}); wait while another broker is not ready; wait while
 *       partitions cannot be read; refuse when its volume is node-local but may not be replaced;
 *       refuse when deleting its volume would delete a partition's only in-sync replica.</li>
 *   <li>Otherwise start: the progress names the pod's and claim's UIDs, and the first step runs.</li>
 * </ol>
 */
public final class NodeLossDecision {
    private NodeLossDecision() {
    }

    /** How the cluster wants node loss handled (from {@code spec.nodeLoss} and the throttle). */
    public record Settings(boolean enabled, Duration timeout, boolean replaceLocalVolumes, long throttleBytesPerSecond) {
    }

    /**
     * One broker as Kubernetes shows it.
     *
     * @param podUid           null when the broker has no pod
     * @param podNode          the node the pod is bound to, null when not scheduled
     * @param pvcName          the data claim, null without persistent storage
     * @param localVolumeNode  the node the claim's volume is pinned to (a PV with node affinity), null when
     *                         the volume is not node-local
     */
    public record Broker(int id, String podName, String podUid, String podNode, boolean podReady, String pvcName,
                         String pvcUid, boolean pvcTerminating, String localVolumeNode) {
        /** The node this broker lives on: its pod's, else its node-local volume's. */
        public Optional<String> node() {
            return Optional.ofNullable(podNode != null ? podNode : localVolumeNode);
        }
    }

    /** A node that exists: whether it is Ready, and since when its Ready condition has had its status. */
    public record Node(String name, boolean ready, Instant since) {
    }

    /**
     * Everything the decision reads.
     *
     * @param nodes      the nodes that exist, by name
     * @param goneSince  for brokers' nodes that no longer exist, when the operator first saw them gone
     * @param partitions every partition of the cluster, empty when the cluster could not be asked
     */
    public record Facts(Instant now, Settings settings, Set<Integer> voters, List<Broker> brokers,
                        Map<String, Node> nodes, Map<String, Instant> goneSince,
                        Optional<List<PartitionReplicas>> partitions, Optional<NodeLossProgress> progress) {
    }

    /**
     * @param next the progress annotation to write once the action succeeded; empty: remove it
     */
    public record Result(NodeLossAction action, Optional<NodeLossProgress> next) {
    }

    public static Result decide(Facts f) {
        if (f.progress().isPresent()) {
            return resume(f, f.progress().get());
        }
        Map<String, Instant> lost = lostNodes(f);
        if (lost.isEmpty()) {
            return none(new NodeLossAction.Healthy());
        }
        Map<String, List<Integer>> brokersByNode = new TreeMap<>();
        for (Broker b : f.brokers()) {
            b.node().filter(lost::containsKey).ifPresent(n -> brokersByNode.computeIfAbsent(n, k -> new ArrayList<>())
                    .add(b.id()));
        }
        if (!f.settings().enabled()) {
            return none(new NodeLossAction.Refuse(NodeLossReason.ReplacementDisabled, "brokers " + brokersByNode
                    + " on lost nodes; spec.nodeLoss.enabled is false, so they are not replaced"));
        }
        if (lost.size() > 1) {
            return none(new NodeLossAction.Refuse(NodeLossReason.MultipleNodesLost, "brokers on " + lost.size()
                    + " lost nodes at once " + brokersByNode + "; replacing none until at most one node is lost"));
        }
        String node = lost.keySet().iterator().next();
        Instant since = lost.get(node);
        Instant due = since.plus(f.settings().timeout());
        int brokerId = brokersByNode.get(node).stream().min(Comparator.naturalOrder()).orElseThrow();
        if (f.now().isBefore(due)) {
            return none(new NodeLossAction.Wait(NodeLossReason.NodeLost, "node " + node + " of broker(s) "
                    + brokersByNode.get(node) + " lost since " + since + "; broker " + brokerId + " is replaced at "
                    + due + " if it is still lost", Duration.between(f.now(), due)));
        }
        Broker broker = broker(f, brokerId).orElseThrow();
        if (f.voters().contains(brokerId)) {
            Set<Integer> readyVoters = f.brokers().stream().filter(b -> f.voters().contains(b.id()) && b.id() != brokerId
                    && b.podReady()).map(Broker::id).collect(Collectors.toCollection(TreeSet::new));
            int majority = f.voters().size() / 2 + 1;
            if (readyVoters.size() < majority) {
                return none(new NodeLossAction.Refuse(NodeLossReason.QuorumAtRisk, "broker " + brokerId
                        + " is a controller voter; without it only voters " + readyVoters + " of " + new TreeSet<>(f.voters())
                        + " are ready, fewer than a majority of " + majority + "; not replacing it"));
            }
        }
        List<Integer> othersNotReady = f.brokers().stream()
                .filter(b -> b.id() != brokerId && !b.podReady() && !b.node().map(lost::containsKey).orElse(false))
                .map(Broker::id).sorted().toList();
        if (!othersNotReady.isEmpty()) {
            return none(new NodeLossAction.Wait(NodeLossReason.BrokerNotReady, "broker " + brokerId + " on lost node "
                    + node + " waits: brokers " + othersNotReady + " are not ready; one broker at a time", null));
        }
        if (f.partitions().isEmpty()) {
            return none(new NodeLossAction.Wait(NodeLossReason.ClusterUnreachable, "broker " + brokerId
                    + " on lost node " + node + " waits: the cluster's partitions cannot be read", null));
        }
        boolean localVolume = broker.pvcUid() != null && broker.localVolumeNode() != null;
        if (localVolume && !f.settings().replaceLocalVolumes()) {
            return none(new NodeLossAction.Refuse(NodeLossReason.LocalVolumeNotReplaced, "broker " + brokerId
                    + "'s volume is local to lost node " + node + " and spec.nodeLoss.replaceLocalVolumes is false"));
        }
        if (localVolume) {
            Optional<PartitionReplicas> only = f.partitions().get().stream()
                    .filter(p -> p.replicas().contains(brokerId) && p.isr().stream().allMatch(r -> r == brokerId))
                    .findFirst();
            if (only.isPresent()) {
                return none(new NodeLossAction.Refuse(NodeLossReason.DataOnlyOnLostBroker, "broker " + brokerId
                        + " holds the only in-sync replica of " + only.get() + " (ISR " + only.get().isr()
                        + "); deleting its volume would lose it"));
            }
        }
        if (broker.podUid() == null) {
            return none(new NodeLossAction.Wait(NodeLossReason.NodeLost, "broker " + brokerId + " has no pod yet", null));
        }
        NodeLossProgress start = new NodeLossProgress(brokerId, node, broker.podUid(), localVolume ? broker.pvcUid() : null,
                NodeLossReason.NodeLost, false, f.now());
        return resume(f, start);
    }

    /** The next step of the replacement {@code p}, judged by what is observed now. */
    private static Result resume(Facts f, NodeLossProgress p) {
        Optional<Broker> broker = broker(f, p.broker());
        int id = p.broker();
        boolean podDeleted = broker.map(b -> !p.podUid().equals(b.podUid())).orElse(true);
        boolean pvcDeleteIssued = p.pvcUid() == null || broker.map(b -> !p.pvcUid().equals(b.pvcUid())
                || b.pvcTerminating()).orElse(true);
        boolean nothingDeletedYet = !podDeleted && (p.pvcUid() == null || broker.map(b -> p.pvcUid().equals(b.pvcUid())
                && !b.pvcTerminating()).orElse(false));
        if (nothingDeletedYet && !lostNodes(f).containsKey(p.node())) {
            String why = "node " + p.node() + " of broker " + id + " is back before anything was deleted; "
                    + "replacement called off";
            return p.throttled() ? new Result(new NodeLossAction.ClearThrottle(id, NodeLossReason.NodeRecovered, why),
                    Optional.empty()) : new Result(new NodeLossAction.Done(id, NodeLossReason.NodeRecovered, why),
                    Optional.empty());
        }
        if (!p.throttled() && f.settings().throttleBytesPerSecond() > 0 && !podDeleted) {
            return new Result(new NodeLossAction.SetThrottle(id, f.settings().throttleBytesPerSecond(),
                    "replacing broker " + id + " of lost node " + p.node() + ": re-replication throttled to "
                            + f.settings().throttleBytesPerSecond() + " bytes/s"),
                    Optional.of(p.with(NodeLossReason.ThrottleSet, true)));
        }
        if (!pvcDeleteIssued) {
            Broker b = broker.orElseThrow();
            return new Result(new NodeLossAction.DeletePvc(id, b.pvcName(), p.pvcUid(), "deleting claim " + b.pvcName()
                    + " (uid " + p.pvcUid() + ") of broker " + id + ": its volume is local to lost node " + p.node()),
                    Optional.of(p.with(NodeLossReason.VolumeDeleted, p.throttled())));
        }
        if (!podDeleted) {
            Broker b = broker.orElseThrow();
            return new Result(new NodeLossAction.ForceDeletePod(id, b.podName(), p.podUid(), "force-deleting pod "
                    + b.podName() + " (uid " + p.podUid() + ") of broker " + id + " stuck on lost node " + p.node()),
                    Optional.of(p.with(NodeLossReason.PodForceDeleted, p.throttled())));
        }
        if (broker.isEmpty() || broker.get().podUid() == null || !broker.get().podReady()) {
            return new Result(new NodeLossAction.Wait(NodeLossReason.ReplacementStarting, "broker " + id
                    + "'s replacement pod is not ready yet" + broker.flatMap(Broker::node).map(n -> " (on " + n + ")")
                    .orElse(""), null), Optional.of(p.with(NodeLossReason.ReplacementStarting, p.throttled())));
        }
        if (f.partitions().isEmpty()) {
            return new Result(new NodeLossAction.Wait(NodeLossReason.ClusterUnreachable, "broker " + id
                    + "'s replacement is ready; the cluster's ISRs cannot be read", null), Optional.of(p));
        }
        List<PartitionReplicas> under = f.partitions().get().stream().filter(q -> !q.isr().containsAll(q.replicas()))
                .toList();
        if (!under.isEmpty()) {
            return new Result(new NodeLossAction.Wait(NodeLossReason.ReplacementCatchingUp, "broker " + id
                    + " is re-replicating; " + under.size() + " partition(s) not fully in sync, e.g. " + under.get(0)
                    + " ISR " + under.get(0).isr() + " of " + under.get(0).replicas(), null),
                    Optional.of(p.with(NodeLossReason.ReplacementCatchingUp, p.throttled())));
        }
        String done = "broker " + id + " replaced after the loss of node " + p.node() + "; every ISR is full again";
        return p.throttled()
                ? new Result(new NodeLossAction.ClearThrottle(id, NodeLossReason.ReplacementComplete,
                done + "; recovery throttle removed"), Optional.empty())
                : new Result(new NodeLossAction.Done(id, NodeLossReason.ReplacementComplete, done), Optional.empty());
    }

    /** The brokers' nodes that are lost, with since when, in name order. */
    static Map<String, Instant> lostNodes(Facts f) {
        Map<String, Instant> out = new TreeMap<>();
        for (Broker b : f.brokers()) {
            b.node().ifPresent(n -> {
                Node node = f.nodes().get(n);
                if (node == null) {
                    out.put(n, f.goneSince().getOrDefault(n, f.now()));
                } else if (!node.ready()) {
                    out.put(n, node.since() == null ? f.now() : node.since());
                }
            });
        }
        return out;
    }

    /**
     * The gone-since record to keep: brokers' nodes that do not exist keep the time first seen gone
     * ({@code now} when new); nodes that exist again, or host no broker, are dropped.
     */
    public static Map<String, Instant> goneSince(Map<String, Instant> previous, List<Broker> brokers,
                                                 Set<String> existingNodes, Instant now) {
        Map<String, Instant> out = new LinkedHashMap<>();
        for (Broker b : brokers) {
            b.node().filter(n -> !existingNodes.contains(n))
                    .ifPresent(n -> out.put(n, previous.getOrDefault(n, now)));
        }
        return out;
    }

    private static Optional<Broker> broker(Facts f, int id) {
        return f.brokers().stream().filter(b -> b.id() == id).findFirst();
    }

    private static Result none(NodeLossAction action) {
        return new Result(action, Optional.empty());
    }
}
