package dev.skein.e2e;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The garbage collector of the real kube-controller-manager follows owner references: deleting an
 * owner removes what it owns (background and foreground propagation) or orphans it on request. The
 * operator relies on this to clean up a SkeinCluster's StatefulSet, Services and ConfigMaps.
 */
@ExtendWith(ControlPlaneExtension.class)
class GarbageCollectionE2E {

    private static final String NAMESPACE = "garbage-collection";
    private static final Duration GC_PATIENCE = Duration.ofSeconds(30);

    @BeforeAll
    static void createNamespace(KubernetesClient client) {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata()
                .build()).serverSideApply();
    }

    @AfterAll
    static void deleteNamespace(KubernetesClient client) {
        client.namespaces().withName(NAMESPACE).delete();
    }

    private static ConfigMap create(KubernetesClient client, String name) {
        return client.configMaps().inNamespace(NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(name).endMetadata().addToData("k", "v").build()).create();
    }

    private static ConfigMap createOwnedBy(KubernetesClient client, String name, ConfigMap owner) {
        return client.configMaps().inNamespace(NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(name)
                .addToOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("ConfigMap")
                        .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid())
                        .withBlockOwnerDeletion(true).build())
                .endMetadata().addToData("k", "v").build()).create();
    }

    private static ConfigMap get(KubernetesClient client, String name) {
        return client.configMaps().inNamespace(NAMESPACE).withName(name).get();
    }

    @Test
    void deletingAnOwnerInTheBackgroundRemovesWhatItOwns(KubernetesClient client) {
        ConfigMap owner = create(client, "bg-owner");
        createOwnedBy(client, "bg-owned-1", owner);
        createOwnedBy(client, "bg-owned-2", owner);

        client.configMaps().inNamespace(NAMESPACE).withName("bg-owner")
                .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();

        await().atMost(GC_PATIENCE).untilAsserted(() -> {
            assertThat(get(client, "bg-owned-1")).isNull();
            assertThat(get(client, "bg-owned-2")).isNull();
        });
        assertThat(get(client, "bg-owner")).isNull();
    }

    @Test
    void foregroundDeletionKeepsTheOwnerUntilItsDependentsAreGone(KubernetesClient client) {
        ConfigMap owner = create(client, "fg-owner");
        ConfigMap owned = createOwnedBy(client, "fg-owned", owner);
        ConfigMap grandchild = createOwnedBy(client, "fg-grandchild", owned);

        client.configMaps().inNamespace(NAMESPACE).withName("fg-owner")
                .withPropagationPolicy(DeletionPropagation.FOREGROUND).delete();

        await().atMost(GC_PATIENCE).untilAsserted(() -> {
            assertThat(get(client, grandchild.getMetadata().getName())).isNull();
            assertThat(get(client, "fg-owned")).isNull();
            assertThat(get(client, "fg-owner")).isNull();
        });
    }

    @Test
    void orphanDeletionLeavesDependentsWithoutTheOwnerReference(KubernetesClient client) {
        ConfigMap owner = create(client, "orphan-owner");
        createOwnedBy(client, "orphan-owned", owner);

        client.configMaps().inNamespace(NAMESPACE).withName("orphan-owner")
                .withPropagationPolicy(DeletionPropagation.ORPHAN).delete();

        await().atMost(GC_PATIENCE).untilAsserted(() -> {
            assertThat(get(client, "orphan-owner")).isNull();
            ConfigMap orphan = get(client, "orphan-owned");
            assertThat(orphan).isNotNull();
            assertThat(orphan.getMetadata().getOwnerReferences()).isEmpty();
        });
    }
}
