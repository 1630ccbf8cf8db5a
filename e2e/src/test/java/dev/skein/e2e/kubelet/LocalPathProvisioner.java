package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Set;

/**
 * The {@code local-path} storage class (the default class) and its provisioner: a claim is
 * provisioned only once the scheduler has picked a node for its first pod (WaitForFirstConsumer;
 * the scheduler writes {@code volume.kubernetes.io/selected-node} on the claim), as a local
 * PersistentVolume with node affinity to that node and its data in a per-node directory
 * ({@code <kubelet root>/nodes/<node>/pv/<pv name>}). A Released volume is deleted with its data
 * (reclaim policy Delete). Owned by the kubelet loop thread.
 */
final class LocalPathProvisioner {

    static final String STORAGE_CLASS = "local-path";
    static final String PROVISIONER = "skein.dev/local-path";
    private static final String SELECTED_NODE = "volume.kubernetes.io/selected-node";
    private static final String PROVISIONED_BY = "pv.kubernetes.io/provisioned-by";

    private final KubernetesClient client;
    private final Path rootDir;
    private final Set<String> nodes;
    private final Set<String> deadNodes;

    LocalPathProvisioner(KubernetesClient client, Path rootDir, Set<String> nodes, Set<String> deadNodes) {
        this.client = client;
        this.rootDir = rootDir;
        this.nodes = nodes;
        this.deadNodes = deadNodes;
    }

    void installStorageClass() {
        StorageClass sc = new StorageClassBuilder()
                .withNewMetadata().withName(STORAGE_CLASS)
                .addToAnnotations("storageclass.kubernetes.io/is-default-class", "true").endMetadata()
                .withProvisioner(PROVISIONER).withVolumeBindingMode("WaitForFirstConsumer").withReclaimPolicy("Delete")
                .build();
        client.storage().v1().storageClasses().resource(sc).fieldManager("skein-process-kubelet").forceConflicts()
                .serverSideApply();
    }

    /** Provisions a volume for the claim if it waits for one on one of our (live) nodes. */
    void onClaim(PersistentVolumeClaim pvc) {
        Map<String, String> annotations = pvc.getMetadata().getAnnotations();
        String node = annotations == null ? null : annotations.get(SELECTED_NODE);
        if (pvc.getSpec().getVolumeName() != null || !STORAGE_CLASS.equals(pvc.getSpec().getStorageClassName())
                || node == null || !nodes.contains(node) || deadNodes.contains(node)
                || pvc.getMetadata().getDeletionTimestamp() != null) {
            return;
        }
        String name = "pvc-" + pvc.getMetadata().getUid();
        if (client.persistentVolumes().withName(name).get() != null) {
            return;
        }
        Path dir = rootDir.resolve("nodes").resolve(node).resolve("pv").resolve(name);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Quantity size = pvc.getSpec().getResources() == null || pvc.getSpec().getResources().getRequests() == null
                ? new Quantity("1Gi") : pvc.getSpec().getResources().getRequests().getOrDefault("storage", new Quantity("1Gi"));
        PersistentVolume pv = new PersistentVolumeBuilder()
                .withNewMetadata().withName(name).addToAnnotations(PROVISIONED_BY, PROVISIONER)
                .addToLabels("skein.dev/node", node).endMetadata()
                .withNewSpec()
                .addToCapacity("storage", size)
                .withAccessModes(pvc.getSpec().getAccessModes())
                .withStorageClassName(STORAGE_CLASS)
                .withPersistentVolumeReclaimPolicy("Delete")
                .withVolumeMode(pvc.getSpec().getVolumeMode())
                .withNewClaimRef().withApiVersion("v1").withKind("PersistentVolumeClaim")
                .withNamespace(pvc.getMetadata().getNamespace()).withName(pvc.getMetadata().getName())
                .withUid(pvc.getMetadata().getUid()).endClaimRef()
                .withNewLocal().withPath(dir.toString()).endLocal()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression()
                .withKey("kubernetes.io/hostname").withOperator("In").withValues(node)
                .endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build();
        try {
            client.persistentVolumes().resource(pv).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }

    /** Deletes a Released volume of ours, data first. */
    void onVolume(PersistentVolume pv) {
        Map<String, String> annotations = pv.getMetadata().getAnnotations();
        if (annotations == null || !PROVISIONER.equals(annotations.get(PROVISIONED_BY)) || pv.getStatus() == null
                || !"Released".equals(pv.getStatus().getPhase())
                || !"Delete".equals(pv.getSpec().getPersistentVolumeReclaimPolicy())) {
            return;
        }
        Path dir = Path.of(pv.getSpec().getLocal().getPath());
        if (dir.startsWith(rootDir) && Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        client.persistentVolumes().withName(pv.getMetadata().getName()).delete();
    }
}
