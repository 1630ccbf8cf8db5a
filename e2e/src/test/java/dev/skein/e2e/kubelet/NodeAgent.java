package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;

/**
 * One node of the process kubelet, as the control plane sees it: a Node object with zone labels
 * and capacity, its Lease in {@code kube-node-lease}, and a Ready status.
 *
 * <p>Not thread-safe: the kubelet's single loop thread owns every agent. {@link #heartbeat(long)}
 * renews the Lease on every call and posts the node status every {@link #STATUS_INTERVAL_MS}, so
 * the node lifecycle controller (grace period 8 s in e2e/cluster) keeps the node Ready for as long
 * as heartbeats run, and turns it NotReady/Unknown once they stop ({@link #lose()}).
 */
final class NodeAgent {

    static final String LEASE_NAMESPACE = "kube-node-lease";
    static final int LEASE_DURATION_SECONDS = 8;
    static final long STATUS_INTERVAL_MS = 10_000;
    static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    static final String KUBELET_LABEL = "skein.dev/process-kubelet";

    private static final DateTimeFormatter RFC3339 = DateTimeFormatter.ISO_INSTANT;

    private final KubernetesClient client;
    private final String name;
    private final String zone;
    private final String address;
    private final String kubeletVersion;
    private String uid;
    private boolean heartbeating = true;
    private long lastStatusMs = Long.MIN_VALUE;

    NodeAgent(KubernetesClient client, String name, String zone, String address, String kubeletVersion) {
        this.client = client;
        this.name = name;
        this.zone = zone;
        this.address = address;
        this.kubeletVersion = kubeletVersion;
    }

    String name() {
        return name;
    }

    String zone() {
        return zone;
    }

    String address() {
        return address;
    }

    boolean heartbeating() {
        return heartbeating;
    }

    /** Creates (or adopts) the Node and its Lease, and posts a Ready status. */
    void register(long nowMs) {
        Node desired = new NodeBuilder()
                .withNewMetadata().withName(name)
                .addToLabels(Map.of("kubernetes.io/hostname", name, "kubernetes.io/os", "linux",
                        "kubernetes.io/arch", "amd64", ZONE_LABEL, zone, KUBELET_LABEL, "true"))
                .endMetadata()
                .withNewSpec().endSpec()
                .withStatus(status(nowMs))
                .build();
        Node node;
        try {
            node = client.nodes().resource(desired).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            node = client.nodes().withName(name).get();
        }
        uid = node.getMetadata().getUid();
        postStatus(nowMs);
        renewLease(nowMs);
    }

    /** Renews the Lease, and posts the status when it is due. Does nothing while the node is lost. */
    void heartbeat(long nowMs) {
        if (!heartbeating) {
            return;
        }
        renewLease(nowMs);
        if (nowMs - lastStatusMs >= STATUS_INTERVAL_MS) {
            postStatus(nowMs);
        }
    }

    /** Fault: the node stops heartbeating, as if its kubelet (or the machine) died. */
    void lose() {
        heartbeating = false;
    }

    /** The node comes back: registered again if its Node was deleted, Ready posted at once, heartbeats resume. */
    void restore(long nowMs) {
        heartbeating = true;
        register(nowMs);
    }

    /** Deletes the Node (its Lease goes with it through the owner reference). */
    void delete() {
        client.nodes().withName(name).delete();
    }

    private void postStatus(long nowMs) {
        NodeStatus status = status(nowMs);
        // A strategic merge patch without resourceVersion: the node lifecycle controller and the
        // NodeTaint admission plugin change the Node concurrently, so an update would conflict.
        client.nodes().withName(name).subresource("status")
                .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), new NodeBuilder().withStatus(status).build());
        lastStatusMs = nowMs;
    }

    private NodeStatus status(long nowMs) {
        String now = RFC3339.format(Instant.ofEpochMilli(nowMs));
        Map<String, Quantity> capacity = Map.of("cpu", new Quantity("8"), "memory", new Quantity("16Gi"),
                "pods", new Quantity("110"), "ephemeral-storage", new Quantity("100Gi"));
        return new NodeStatusBuilder()
                .withCapacity(capacity).withAllocatable(capacity)
                .withConditions(
                        condition("Ready", "True", "KubeletReady", "process kubelet is posting ready status", now),
                        condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "", now),
                        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "", now),
                        condition("PIDPressure", "False", "KubeletHasSufficientPID", "", now))
                .addNewAddress().withType("InternalIP").withAddress(address).endAddress()
                .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                .withNewNodeInfo().withKubeletVersion(kubeletVersion).withOperatingSystem("linux")
                .withArchitecture("amd64").withContainerRuntimeVersion("skein-process://0.1")
                .withMachineID(name).withSystemUUID(name).withBootID(name).withKernelVersion("")
                .withOsImage("skein process kubelet").endNodeInfo()
                .build();
    }

    private static NodeCondition condition(String type, String status, String reason, String message, String now) {
        return new NodeConditionBuilder().withType(type).withStatus(status).withReason(reason).withMessage(message)
                .withLastHeartbeatTime(now).withLastTransitionTime(now).build();
    }

    private void renewLease(long nowMs) {
        ZonedDateTime renewTime = ZonedDateTime.ofInstant(Instant.ofEpochMilli(nowMs), ZoneOffset.UTC);
        Lease lease = new LeaseBuilder()
                .withNewMetadata().withName(name).withNamespace(LEASE_NAMESPACE)
                .withOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Node")
                        .withName(name).withUid(uid).build()))
                .endMetadata()
                .withNewSpec().withHolderIdentity(name).withLeaseDurationSeconds(LEASE_DURATION_SECONDS)
                .withRenewTime(renewTime).endSpec()
                .build();
        client.resources(Lease.class).inNamespace(LEASE_NAMESPACE).resource(lease)
                .fieldManager("skein-process-kubelet").forceConflicts().serverSideApply();
    }
}
