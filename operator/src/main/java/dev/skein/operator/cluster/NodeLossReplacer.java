package dev.skein.operator.cluster;

import dev.skein.operator.kafka.KafkaAdmins;
import dev.skein.operator.kafka.ReplicationThrottle;
import dev.skein.operator.model.NodeLossSpec;
import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Replaces a broker whose node is lost, one step per reconcile: reads the nodes, the brokers' pods,
 * claims and volumes, asks {@link NodeLossDecision}, and applies its answer: the recovery throttle
 * through the Admin client, the claim and pod deletes with UID preconditions, the progress
 * annotation ({@link NodeLossProgress#ANNOTATION}), an Event per step and the counter
 * {@code skein_operator_node_loss_steps_total{namespace,cluster,reason}}.
 *
 * <p>Order of writes, so that an operator restart at any point resumes safely: the progress is
 * written before a delete or setting the throttle (a repeated delete finds the UID gone and does
 * nothing), and removed only after the throttle is cleared (a repeated clear is harmless).
 *
 * <p>RBAC: nodes get/list; persistentvolumes get; persistentvolumeclaims list/delete; pods delete;
 * events create; skeinclusters patch.
 */
public final class NodeLossReplacer {
    private static final Logger LOG = LoggerFactory.getLogger(NodeLossReplacer.class);
    /** For nodes hosting brokers that no longer exist: {@code node=instant,...}, when first seen gone. */
    public static final String GONE_SINCE_ANNOTATION = "skein.dev/node-loss-gone-since";
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);
    private static final Set<String> HOSTNAME_KEYS = Set.of("kubernetes.io/hostname");

    private final KafkaAdmins admins;
    private final Clock clock;
    private final MeterRegistry registry;

    public NodeLossReplacer(KafkaAdmins admins, Clock clock, MeterRegistry registry) {
        this.admins = admins;
        this.clock = clock;
        this.registry = registry;
    }

    /**
     * One step of node-loss handling for {@code cluster}.
     *
     * @param pods            the cluster's broker pods
     * @param partitions      the cluster's partitions, empty if it could not be asked
     * @param previousReason  the reason of the Degraded condition last written (Events only on a change)
     * @return what was decided (and done), for the Degraded condition
     */
    public NodeLossAction reconcile(SkeinCluster cluster, List<Pod> pods, Optional<List<PartitionReplicas>> partitions,
                                    KubernetesClient client, Optional<String> previousReason) {
        ClusterNames names = new ClusterNames(cluster);
        ClusterEvents events = new ClusterEvents(client, clock);
        Instant now = clock.instant();
        Map<String, NodeLossDecision.Node> nodes = new HashMap<>();
        Map<String, String> nodeByHostname = new HashMap<>();
        for (io.fabric8.kubernetes.api.model.Node n : client.nodes().list().getItems()) {
            nodes.put(n.getMetadata().getName(), node(n));
            String hostname = n.getMetadata().getLabels() == null ? null
                    : n.getMetadata().getLabels().get("kubernetes.io/hostname");
            if (hostname != null) {
                nodeByHostname.put(hostname, n.getMetadata().getName());
            }
        }
        List<NodeLossDecision.Broker> brokers = brokers(cluster, names, pods, client, nodeByHostname);
        Map<String, String> annotations = cluster.getMetadata().getAnnotations() == null ? Map.of()
                : cluster.getMetadata().getAnnotations();
        Map<String, Instant> goneSince = NodeLossDecision.goneSince(parseGoneSince(annotations.get(GONE_SINCE_ANNOTATION)),
                brokers, nodes.keySet(), now);
        String goneText = formatGoneSince(goneSince);
        if (!Objects.equals(goneText, annotations.get(GONE_SINCE_ANNOTATION))) {
            annotate(client, cluster, GONE_SINCE_ANNOTATION, goneText);
        }
        Optional<NodeLossProgress> progress = Optional.empty();
        String progressText = annotations.get(NodeLossProgress.ANNOTATION);
        if (progressText != null) {
            try {
                progress = Optional.of(NodeLossProgress.parse(progressText));
            } catch (IllegalArgumentException e) {
                events.warning(cluster, "InvalidAnnotation", e.getMessage() + "; removed");
                annotate(client, cluster, NodeLossProgress.ANNOTATION, null);
            }
        }
        NodeLossDecision.Facts facts = new NodeLossDecision.Facts(now, settings(cluster), voters(cluster), brokers,
                nodes, goneSince, partitions, progress);
        NodeLossDecision.Result result = NodeLossDecision.decide(facts);
        apply(cluster, names, client, result, progressText, partitions, events, previousReason);
        return result.action();
    }

    private void apply(SkeinCluster cluster, ClusterNames names, KubernetesClient client, NodeLossDecision.Result result,
                       String progressText, Optional<List<PartitionReplicas>> partitions, ClusterEvents events,
                       Optional<String> previousReason) {
        NodeLossAction action = result.action();
        String next = result.next().map(NodeLossProgress::format).orElse(null);
        boolean acting = !(action instanceof NodeLossAction.Wait || action instanceof NodeLossAction.Refuse
                || action instanceof NodeLossAction.Healthy);
        boolean reasonChanged = previousReason.map(r -> !r.equals(action.reason().name())).orElse(true);
        if (acting || reasonChanged) {
            LOG.info("SkeinCluster {}/{}: node loss: {}: {}", names.namespace(), names.cluster(), action.reason(),
                    action.message());
        }
        // The Event goes out before the step takes effect: an operator that dies right after deleting a
        // pod or a claim has announced it, and its successor, resuming from the annotation, does not repeat
        // a step it sees done (a step that failed is decided, and announced, again).
        if (acting || (reasonChanged && !(action instanceof NodeLossAction.Healthy))) {
            if (action instanceof NodeLossAction.Refuse || action.reason() == NodeLossReason.NodeLost) {
                events.warning(cluster, action.reason().name(), action.message());
            } else {
                events.normal(cluster, action.reason().name(), action.message());
            }
            Counter.builder("skein.operator.node.loss.steps")
                    .description("Node-loss handling steps taken or reported (by reason)")
                    .tag("namespace", names.namespace()).tag("cluster", names.cluster())
                    .tag("reason", action.reason().name()).register(registry).increment();
        }
        switch (action) {
            case NodeLossAction.SetThrottle t -> {
                annotate(client, cluster, NodeLossProgress.ANNOTATION, next);
                try {
                    throttle(names).set(t.bytesPerSecond(), recoveryMoves(t.broker(), partitions.orElse(List.of())));
                } catch (RuntimeException e) {
                    annotate(client, cluster, NodeLossProgress.ANNOTATION, progressText);
                    throw e;
                }
            }
            case NodeLossAction.DeletePvc d -> {
                annotate(client, cluster, NodeLossProgress.ANNOTATION, next);
                deleteWithUid(client, "/api/v1/namespaces/" + names.namespace() + "/persistentvolumeclaims/" + d.name(),
                        d.uid(), null);
            }
            case NodeLossAction.ForceDeletePod p -> {
                annotate(client, cluster, NodeLossProgress.ANNOTATION, next);
                deleteWithUid(client, "/api/v1/namespaces/" + names.namespace() + "/pods/" + p.name(), p.uid(), 0L);
            }
            case NodeLossAction.ClearThrottle c -> {
                throttle(names).clear();
                annotate(client, cluster, NodeLossProgress.ANNOTATION, next);
            }
            case NodeLossAction.Done d -> annotate(client, cluster, NodeLossProgress.ANNOTATION, next);
            case NodeLossAction.Wait w -> {
                if (!Objects.equals(next, progressText) && result.next().isPresent()) {
                    annotate(client, cluster, NodeLossProgress.ANNOTATION, next);
                }
            }
            case NodeLossAction.Refuse r -> {
            }
            case NodeLossAction.Healthy h -> {
            }
        }
    }

    private ReplicationThrottle throttle(ClusterNames names) {
        return new ReplicationThrottle(admins.forBootstrap(names.bootstrapServers()), admins.timeout().toMillis());
    }

    /**
     * What the replacement of {@code broker} copies, as throttle moves: each partition it hosts,
     * fetched from the partition's other replicas (any may lead) by {@code broker}.
     */
    static List<ReplicationThrottle.Move> recoveryMoves(int broker, List<PartitionReplicas> partitions) {
        return partitions.stream().filter(p -> p.replicas().contains(broker))
                .map(p -> new ReplicationThrottle.Move(p.topic(), p.partition(),
                        p.replicas().stream().filter(r -> r != broker).toList(), List.of(broker)))
                .toList();
    }

    /**
     * DELETE with {@code preconditions.uid} (fabric8 8 has no DSL for it, so the DeleteOptions body is
     * sent raw): the object is deleted only if it is still the one the decision saw. Not found, or a
     * different UID (409), means it is already gone: nothing to do.
     */
    static void deleteWithUid(KubernetesClient client, String path, String uid, Long gracePeriodSeconds) {
        DeleteOptions options = new DeleteOptionsBuilder().withApiVersion("v1").withKind("DeleteOptions")
                .withGracePeriodSeconds(gracePeriodSeconds).withNewPreconditions().withUid(uid).endPreconditions()
                .build();
        try {
            client.raw(path, "DELETE", options);
        } catch (KubernetesClientException e) {
            if (e.getCode() == HttpURLConnection.HTTP_NOT_FOUND || e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
                LOG.info("{} (uid {}) is already gone: {}", path, uid, e.getCode());
                return;
            }
            throw e;
        }
    }

    /** Sets (or with null removes) one annotation of the SkeinCluster with a JSON merge patch. */
    private static void annotate(KubernetesClient client, SkeinCluster cluster, String key, String value) {
        // built by hand: a null must reach the API server as JSON null (merge patch: remove the key)
        String patch = "{\"metadata\":{\"annotations\":{" + json(key) + ":" + (value == null ? "null" : json(value))
                + "}}}";
        client.resources(SkeinCluster.class).inNamespace(cluster.getMetadata().getNamespace())
                .withName(cluster.getMetadata().getName()).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        Map<String, String> local = cluster.getMetadata().getAnnotations() == null ? new HashMap<>()
                : new HashMap<>(cluster.getMetadata().getAnnotations());
        if (value == null) {
            local.remove(key);
        } else {
            local.put(key, value);
        }
        cluster.getMetadata().setAnnotations(local);
    }

    /** A JSON string literal. */
    static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    static NodeLossDecision.Settings settings(SkeinCluster cluster) {
        NodeLossSpec spec = cluster.getSpec().getNodeLoss() == null ? new NodeLossSpec() : cluster.getSpec().getNodeLoss();
        Duration timeout = spec.getTimeoutSeconds() == null ? DEFAULT_TIMEOUT : Duration.ofSeconds(spec.getTimeoutSeconds());
        Long throttle = cluster.getSpec().getReplicationThrottleBytesPerSecond();
        return new NodeLossDecision.Settings(spec.isEnabled(), timeout, spec.isReplaceLocalVolumes(),
                throttle == null ? 0 : throttle);
    }

    static Set<Integer> voters(SkeinCluster cluster) {
        return IntStream.range(0, Math.min(BrokerConfigMap.controllerVoters(cluster.getSpec()),
                cluster.getSpec().getBrokers())).boxed().collect(Collectors.toSet());
    }

    static NodeLossDecision.Node node(io.fabric8.kubernetes.api.model.Node n) {
        return n.getStatus() == null || n.getStatus().getConditions() == null
                ? new NodeLossDecision.Node(n.getMetadata().getName(), false, null)
                : n.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst()
                .map(c -> new NodeLossDecision.Node(n.getMetadata().getName(), "True".equals(c.getStatus()),
                        c.getLastTransitionTime() == null ? null : Instant.parse(c.getLastTransitionTime())))
                .orElse(new NodeLossDecision.Node(n.getMetadata().getName(), false, null));
    }

    /** @param nodeByHostname node names by their {@code kubernetes.io/hostname} label (a volume's affinity names the label) */
    private static List<NodeLossDecision.Broker> brokers(SkeinCluster cluster, ClusterNames names, List<Pod> pods,
                                                          KubernetesClient client, Map<String, String> nodeByHostname) {
        Map<Integer, Pod> byId = new HashMap<>();
        for (Pod pod : pods) {
            String index = pod.getMetadata().getLabels() == null ? null
                    : pod.getMetadata().getLabels().get(SkeinClusterReconciler.POD_INDEX_LABEL);
            if (index != null) {
                byId.put(Integer.parseInt(index), pod);
            }
        }
        Map<String, PersistentVolumeClaim> claims = new HashMap<>();
        if (cluster.getSpec().getStorage() != null) {
            for (PersistentVolumeClaim c : client.persistentVolumeClaims().inNamespace(names.namespace())
                    .withLabels(names.selector()).list().getItems()) {
                claims.put(c.getMetadata().getName(), c);
            }
        }
        List<NodeLossDecision.Broker> out = new ArrayList<>();
        for (int id = 0; id < cluster.getSpec().getBrokers(); id++) {
            Pod pod = byId.get(id);
            String claimName = BrokerStatefulSet.DATA_VOLUME + "-" + names.pod(id);
            PersistentVolumeClaim claim = claims.get(claimName);
            String localNode = null;
            if (claim != null && claim.getSpec().getVolumeName() != null && !claim.getSpec().getVolumeName().isEmpty()) {
                PersistentVolume pv = client.persistentVolumes().withName(claim.getSpec().getVolumeName()).get();
                String hostname = pv == null ? null : localNode(pv);
                // a gone node has no label left to map: its hostname stands for its name
                localNode = hostname == null ? null : nodeByHostname.getOrDefault(hostname, hostname);
            }
            out.add(new NodeLossDecision.Broker(id, names.pod(id), pod == null ? null : pod.getMetadata().getUid(),
                    pod == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty() ? null
                            : pod.getSpec().getNodeName(),
                    pod != null && SkeinClusterReconciler.isReady(pod), claim == null ? null : claimName,
                    claim == null ? null : claim.getMetadata().getUid(),
                    claim != null && claim.getMetadata().getDeletionTimestamp() != null, localNode));
        }
        return out;
    }

    /**
     * The node a volume is pinned to: a required node affinity of one term selecting one hostname
     * (local volumes, local-path and hostPath provisioners), else null (a network volume that can
     * attach elsewhere; a zone-pinned volume is not node-local).
     */
    static String localNode(PersistentVolume pv) {
        if (pv.getSpec() == null || pv.getSpec().getNodeAffinity() == null
                || pv.getSpec().getNodeAffinity().getRequired() == null) {
            return null;
        }
        List<NodeSelectorTerm> terms = pv.getSpec().getNodeAffinity().getRequired().getNodeSelectorTerms();
        if (terms == null || terms.size() != 1 || terms.get(0).getMatchExpressions() == null) {
            return null;
        }
        for (NodeSelectorRequirement r : terms.get(0).getMatchExpressions()) {
            if (HOSTNAME_KEYS.contains(r.getKey()) && "In".equals(r.getOperator()) && r.getValues() != null
                    && r.getValues().size() == 1) {
                return r.getValues().get(0);
            }
        }
        return null;
    }

    static Map<String, Instant> parseGoneSince(String text) {
        Map<String, Instant> out = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String pair : text.split(",")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                try {
                    out.put(pair.substring(0, eq).trim(), Instant.parse(pair.substring(eq + 1).trim()));
                } catch (java.time.format.DateTimeParseException e) {
                    // a hand-edited entry: counted from now instead
                }
            }
        }
        return out;
    }

    static String formatGoneSince(Map<String, Instant> goneSince) {
        return goneSince.isEmpty() ? null : goneSince.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
    }
}
