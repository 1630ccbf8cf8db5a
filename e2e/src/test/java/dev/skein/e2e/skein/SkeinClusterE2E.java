package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * SkeinCluster end to end, up to the brokers' pods: the operator jar (cluster reconciler) against
 * the real API server creates the cluster's ConfigMap, Services, ServiceAccount, StatefulSet and
 * PodDisruptionBudget, owned by the SkeinCluster; the real StatefulSet controller accepts the
 * StatefulSet and creates the broker pods (they stay Pending: this test starts no kubelet);
 * a spec change updates the objects; deleting the SkeinCluster lets the garbage collector remove
 * them. Brokers running as pods come with the broker image (issue 5 follow-up).
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinClusterE2E {
    private static final String NAMESPACE = "skein-cluster-e2e";
    private static final Duration CONVERGE = Duration.ofSeconds(60);
    private static final int RESYNC_SECONDS = 4;

    private static OperatorProcess operator;

    @RegisterExtension
    static final TestWatcher LOGS_ON_FAILURE = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            System.err.printf("%n==== %s failed; operator log:%n%s%n", context.getDisplayName(),
                    operator == null ? "(not started)" : operator.logTail(60));
        }
    };

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws IOException {
        SkeinCrds.install(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        operator = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeincluster", RESYNC_SECONDS);
    }

    @AfterAll
    static void stop(KubernetesClient client) throws InterruptedException {
        if (operator != null) {
            operator.close();
        }
        client.namespaces().withName(NAMESPACE).delete();
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> clusters(KubernetesClient client) {
        return client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE);
    }

    private static GenericKubernetesResource cluster(String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder().withApiVersion("skein.dev/v1alpha1").withKind("SkeinCluster")
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", spec).build();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> status(KubernetesClient client, String name) {
        Object status = clusters(client).withName(name).get().getAdditionalProperties().get("status");
        return status == null ? Map.of() : (Map<String, Object>) status;
    }

    /** The status conditions of cluster {@code name}, none until the operator has written any. */
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> conditions(KubernetesClient client, String name) {
        Object conditions = status(client, name).get("conditions");
        return conditions == null ? List.of() : (List<Map<String, Object>>) conditions;
    }

    private static Map<String, Object> ready(KubernetesClient client, String name) {
        return conditions(client, name).stream().filter(c -> "Ready".equals(c.get("type")))
                .findFirst().orElse(Map.of());
    }

    private static List<Object> conditionTypes(KubernetesClient client, String name) {
        return conditions(client, name).stream().map(c -> c.get("type")).toList();
    }

    private static Properties brokerConfig(ConfigMap cm, int node) throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(cm.getData().get("node-" + node + ".properties")));
        return p;
    }

    /** The objects a cluster named {@code name} owns, as the API server has them (null when absent). */
    private static List<Supplier<HasMetadata>> owned(KubernetesClient client, String name) {
        return List.of(
                () -> client.configMaps().inNamespace(NAMESPACE).withName(name + "-config").get(),
                () -> client.services().inNamespace(NAMESPACE).withName(name + "-brokers").get(),
                () -> client.services().inNamespace(NAMESPACE).withName(name + "-bootstrap").get(),
                () -> client.serviceAccounts().inNamespace(NAMESPACE).withName(name + "-broker").get(),
                () -> client.apps().statefulSets().inNamespace(NAMESPACE).withName(name + "-broker").get(),
                () -> client.policy().v1().podDisruptionBudget().inNamespace(NAMESPACE).withName(name + "-brokers").get());
    }

    @Test
    void clusterGetsItsOwnedObjectsAndBrokerPodsAndReportsReadiness(KubernetesClient client) throws Exception {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("brokers", 3);
        spec.put("storage", Map.of("size", "1Gi"));
        spec.put("config", Map.of("num.partitions", "6"));
        String uid = clusters(client).resource(cluster("alpha", spec)).create().getMetadata().getUid();

        await().atMost(CONVERGE).untilAsserted(() -> {
            for (Supplier<HasMetadata> object : owned(client, "alpha")) {
                HasMetadata o = object.get();
                assertThat(o).as("owned object").isNotNull();
                assertThat(o.getMetadata().getOwnerReferences()).as(o.getKind() + " owner").singleElement()
                        .satisfies(ref -> {
                            assertThat(ref.getUid()).isEqualTo(uid);
                            assertThat(ref.getController()).isTrue();
                        });
            }
        });
        ConfigMap cm = client.configMaps().inNamespace(NAMESPACE).withName("alpha-config").get();
        assertThat(cm.getData()).containsOnlyKeys("node-0.properties", "node-1.properties", "node-2.properties");
        assertThat(brokerConfig(cm, 2)).containsEntry("node.id", "2").containsEntry("num.partitions", "6");
        Service headless = client.services().inNamespace(NAMESPACE).withName("alpha-brokers").get();
        assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
        StatefulSet sts = client.apps().statefulSets().inNamespace(NAMESPACE).withName("alpha-broker").get();
        assertThat(sts.getSpec().getUpdateStrategy().getType()).isEqualTo("OnDelete");

        // the StatefulSet controller accepted the StatefulSet: three broker pods, node id from their ordinal
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(client.pods().inNamespace(NAMESPACE)
                .withLabel("skein.dev/cluster", "alpha").list().getItems())
                .extracting(p -> p.getMetadata().getName() + "#" + p.getMetadata().getLabels().get("apps.kubernetes.io/pod-index"))
                .containsExactlyInAnyOrder("alpha-broker-0#0", "alpha-broker-1#1", "alpha-broker-2#2"));
        Pod pod = client.pods().inNamespace(NAMESPACE).withName("alpha-broker-1").get();
        assertThat(pod.getSpec().getContainers().get(0).getArgs()).containsExactly("--pod");
        assertThat(pod.getSpec().getVolumes()).anySatisfy(v -> assertThat(v.getPersistentVolumeClaim().getClaimName())
                .isEqualTo("data-alpha-broker-1"));

        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(status(client, "alpha")).containsEntry("bootstrapServers", "alpha-bootstrap." + NAMESPACE + ".svc:9092")
                    .containsEntry("readyBrokers", 0).containsEntry("observedGeneration", 1);
            assertThat(ready(client, "alpha")).containsEntry("status", "False").containsEntry("reason", "BrokersNotReady")
                    .containsEntry("message", "0/3 brokers ready");
            // the operator writes Progressing once the StatefulSet controller has reported its revisions, which
            // can be a status write after Ready's: the snapshot below must not be taken between the two
            assertThat(conditionTypes(client, "alpha")).contains("Ready", "Degraded", "Progressing");
        });

        // no churn: reconciles that find nothing new (every few seconds) change none of the objects. What the
        // operator writes is compared, not resourceVersions: the StatefulSet and disruption controllers
        // write the status of the StatefulSet and the PDB on their own time (late under load, as in CI).
        Map<String, Object> written = operatorWritten(client, "alpha");
        await("no-op reconciles leave the cluster's objects unchanged")
                .during(Duration.ofSeconds(3L * RESYNC_SECONDS)).atMost(Duration.ofSeconds(5L * RESYNC_SECONDS))
                .untilAsserted(() -> assertThat(operatorWritten(client, "alpha")).containsExactlyEntriesOf(written));
    }

    /**
     * What the operator writes of cluster {@code name}'s objects, by kind: each owned object without its
     * status, resourceVersion and managedFields, and the SkeinCluster with its status (the operator's own).
     */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> operatorWritten(KubernetesClient client, String name) {
        Map<String, Object> written = new LinkedHashMap<>();
        for (Supplier<HasMetadata> object : owned(client, name)) {
            HasMetadata o = object.get();
            Map<String, Object> json = asMap(client, o);
            json.remove("status");
            Map<String, Object> metadata = (Map<String, Object>) json.get("metadata");
            metadata.remove("resourceVersion");
            metadata.remove("managedFields");
            written.put(o.getKind(), json);
        }
        GenericKubernetesResource cluster = clusters(client).withName(name).get();
        Map<String, Object> json = asMap(client, cluster);
        ((Map<String, Object>) json.get("metadata")).remove("managedFields");
        written.put("SkeinCluster", json);
        return written;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(KubernetesClient client, HasMetadata o) {
        return client.getKubernetesSerialization().unmarshal(client.getKubernetesSerialization().asJson(o), Map.class);
    }

    @Test
    @SuppressWarnings("unchecked")
    void specChangeUpdatesTheConfigAndScalesTheStatefulSet(KubernetesClient client) {
        clusters(client).resource(cluster("beta", new LinkedHashMap<>(Map.of("brokers", 3)))).create();
        await().atMost(CONVERGE).until(() -> client.apps().statefulSets().inNamespace(NAMESPACE).withName("beta-broker").get() != null);

        clusters(client).withName("beta").edit(r -> {
            Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) r.getAdditionalProperties().get("spec"));
            spec.put("brokers", 4);
            spec.put("config", Map.of("log.retention.ms", "60000"));
            r.getAdditionalProperties().put("spec", spec);
            return r;
        });

        await().atMost(CONVERGE).untilAsserted(() -> {
            ConfigMap cm = client.configMaps().inNamespace(NAMESPACE).withName("beta-config").get();
            assertThat(cm.getData()).containsKey("node-3.properties");
            assertThat(brokerConfig(cm, 0)).containsEntry("log.retention.ms", "60000");
            // three voters stay three: the new broker is a broker only
            assertThat(brokerConfig(cm, 3)).containsEntry("process.roles", "broker");
            assertThat(client.apps().statefulSets().inNamespace(NAMESPACE).withName("beta-broker").get().getSpec()
                    .getReplicas()).isEqualTo(4);
            assertThat(status(client, "beta")).containsEntry("observedGeneration", 2);
            assertThat(ready(client, "beta")).containsEntry("message", "0/4 brokers ready");
        });
    }

    @Test
    void deletingTheClusterDeletesItsObjects(KubernetesClient client) {
        clusters(client).resource(cluster("gamma", new LinkedHashMap<>(Map.of("brokers", 1)))).create();
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(owned(client, "gamma")).allSatisfy(
                o -> assertThat(o.get()).isNotNull()));

        clusters(client).withName("gamma").delete();

        await().atMost(CONVERGE).untilAsserted(() -> assertThat(owned(client, "gamma")).allSatisfy(
                o -> assertThat(o.get()).isNull()));
    }
}
