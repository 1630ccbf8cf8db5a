package dev.skein.e2e.skein;

import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The Skein custom resources as the operator's end-to-end tests read and write them: untyped
 * ({@link GenericKubernetesResource}), as {@code kubectl} sees them, so a test checks the CRD's
 * actual shape and not the operator's model classes.
 */
public final class SkeinResources {
    public static final ResourceDefinitionContext CLUSTERS = context("SkeinCluster", "skeinclusters");
    public static final ResourceDefinitionContext TOPICS = context("SkeinTopic", "skeintopics");
    public static final ResourceDefinitionContext GROUPS = context("SkeinConsumerGroup", "skeinconsumergroups");

    private SkeinResources() {
    }

    public static ResourceDefinitionContext context(String kind, String plural) {
        return new ResourceDefinitionContext.Builder().withGroup("skein.dev").withVersion("v1alpha1").withKind(kind)
                .withPlural(plural).withNamespaced(true).build();
    }

    /** A resource of {@code kind} with this spec, as a user would apply it. */
    public static GenericKubernetesResource resource(String kind, String namespace, String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder().withApiVersion("skein.dev/v1alpha1").withKind(kind)
                .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                .addToAdditionalProperties("spec", spec).build();
    }

    /** Its status, empty when there is none (or no resource). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> status(GenericKubernetesResource r) {
        Object status = r == null ? null : r.getAdditionalProperties().get("status");
        return status == null ? Map.of() : (Map<String, Object>) status;
    }

    /** Its condition of {@code type}, empty when there is none. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> condition(GenericKubernetesResource r, String type) {
        Object conditions = status(r).get("conditions");
        return conditions == null ? Map.of() : ((List<Map<String, Object>>) conditions).stream()
                .filter(c -> type.equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    /** A pod that is not being deleted and whose Ready condition is True. */
    public static boolean podReady(Pod pod) {
        return pod != null && pod.getMetadata().getDeletionTimestamp() == null && pod.getStatus() != null
                && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /**
     * Test cleanup: deletes every resource of these kinds in the namespace, first removing their
     * finalizers, so that whatever a stopped (or failed) operator did not finish cannot keep the
     * namespace from going away.
     */
    public static void deleteIgnoringFinalizers(KubernetesClient client, String namespace,
                                                ResourceDefinitionContext... kinds) {
        for (ResourceDefinitionContext kind : kinds) {
            var resources = client.genericKubernetesResources(kind).inNamespace(namespace);
            for (GenericKubernetesResource left : resources.list().getItems()) {
                resources.withName(left.getMetadata().getName()).edit(r -> {
                    r.getMetadata().setFinalizers(List.of());
                    return r;
                });
            }
            resources.delete();
        }
    }

    /**
     * On a failed test, prints the operator's log tail and the tail of each broker pod's log
     * ({@code <cluster>-broker-<i>}, {@code i < brokers}), read when the failure happens.
     */
    static TestWatcher logsOnFailure(Supplier<ProcessKubelet> kubelet, Supplier<OperatorProcess> operator,
                                     String namespace, String cluster, int brokers, int brokerLogChars) {
        return new TestWatcher() {
            @Override
            public void testFailed(ExtensionContext context, Throwable cause) {
                StringBuilder pods = new StringBuilder();
                ProcessKubelet k = kubelet.get();
                for (int i = 0; i < brokers && k != null; i++) {
                    String log = k.log(namespace, cluster + "-broker-" + i, "broker");
                    pods.append("---- broker ").append(i).append('\n')
                            .append(log.length() > brokerLogChars ? log.substring(log.length() - brokerLogChars) : log)
                            .append('\n');
                }
                OperatorProcess o = operator.get();
                System.err.printf("%n==== %s failed; operator log:%n%s%n==== broker pods:%n%s", context.getDisplayName(),
                        o == null ? "(not started)" : o.logTail(120), pods);
            }
        };
    }
}
