package dev.skein.e2e;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.InputStream;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** CEL validation rules in a CRD schema are enforced by the real API server, with their messages. */
@ExtendWith(ControlPlaneExtension.class)
class CelValidationE2E {

    private static final String NAMESPACE = "cel-validation";
    private static final ResourceDefinitionContext WIDGETS = new ResourceDefinitionContext.Builder()
            .withGroup("e2e.skein.dev").withVersion("v1").withKind("Widget").withPlural("widgets")
            .withNamespaced(true).build();

    private static CustomResourceDefinition crd;

    @BeforeAll
    static void installCrd(KubernetesClient client) throws Exception {
        try (InputStream yaml = CelValidationE2E.class.getResourceAsStream("/crds/widgets.yaml")) {
            crd = client.apiextensions().v1().customResourceDefinitions().load(yaml).item();
        }
        client.apiextensions().v1().customResourceDefinitions().resource(crd).serverSideApply();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).get()
                        .getStatus().getConditions())
                .anySatisfy(c -> {
                    assertThat(c.getType()).isEqualTo("Established");
                    assertThat(c.getStatus()).isEqualTo("True");
                }));
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata()
                .build()).serverSideApply();
    }

    @AfterAll
    static void removeCrd(KubernetesClient client) {
        client.namespaces().withName(NAMESPACE).delete();
        client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).delete();
    }

    private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> widgets(KubernetesClient client) {
        return client.genericKubernetesResources(WIDGETS);
    }

    private static GenericKubernetesResource widget(String name, int replicas, int minInSyncReplicas) {
        return new GenericKubernetesResourceBuilder()
                .withApiVersion("e2e.skein.dev/v1").withKind("Widget")
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", Map.of("replicas", replicas, "minInSyncReplicas", minInSyncReplicas))
                .build();
    }

    @Test
    void objectThatSatisfiesTheRuleIsAccepted(KubernetesClient client) {
        GenericKubernetesResource created = widgets(client).resource(widget("good", 3, 2)).create();

        assertThat(created.getMetadata().getUid()).isNotBlank();
    }

    @Test
    void objectThatBreaksTheRuleIsRejectedWithTheRuleMessage(KubernetesClient client) {
        assertThatThrownBy(() -> widgets(client).resource(widget("bad", 1, 2)).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getMessage()).contains("minInSyncReplicas must not exceed replicas");
                });
        assertThat(widgets(client).inNamespace(NAMESPACE).withName("bad").get()).isNull();
    }

    @Test
    void transitionRuleComparesWithTheStoredObject(KubernetesClient client) {
        widgets(client).resource(widget("transition", 5, 4)).create();

        assertThatThrownBy(() -> widgets(client).resource(widget("transition", 5, 1)).forceConflicts().serverSideApply())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getMessage()).contains("minInSyncReplicas may be lowered by at most one at a time");
                });
        GenericKubernetesResource lowered = widgets(client).resource(widget("transition", 5, 3)).forceConflicts().serverSideApply();
        assertThat(lowered.get("spec", "minInSyncReplicas").toString()).isEqualTo("3");
    }
}
