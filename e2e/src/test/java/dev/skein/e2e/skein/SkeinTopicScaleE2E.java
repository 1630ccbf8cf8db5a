package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The scale figure: how long 1,000 SkeinTopics take to converge (every one Ready, every
 * topic in the cluster) and how much memory the operator uses. Opt-in, as it is a measurement more
 * than a check ({@code e2e/run -Dit.test=SkeinTopicScaleE2E -Dskein.e2e.scale=true}).
 */
@ExtendWith(ControlPlaneExtension.class)
@EnabledIfSystemProperty(named = "skein.e2e.scale", matches = "true", disabledReason = "a measurement; opt-in")
class SkeinTopicScaleE2E {
    private static final String NAMESPACE = "skein-topic-scale-e2e";
    private static final int TOPICS = Integer.getInteger("skein.e2e.scale.topics", 1000);

    private static BrokerCluster brokers;
    private static OperatorProcess operator;

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> topics(KubernetesClient client) {
        return client.genericKubernetesResources(SkeinResources.TOPICS).inNamespace(NAMESPACE);
    }

    private static GenericKubernetesResource resource(String kind, String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder().withApiVersion("skein.dev/v1alpha1").withKind(kind)
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", spec).build();
    }

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws Exception {
        SkeinCrds.install(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        brokers = BrokerCluster.start(3);
        var clusters = client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE);
        clusters.resource(resource("SkeinCluster", "alpha", Map.of("brokers", 3))).create();
        GenericKubernetesResource cluster = clusters.withName("alpha").get();
        cluster.setAdditionalProperty("status", Map.of("bootstrapServers", brokers.bootstrapServers()));
        clusters.resource(cluster).updateStatus();
        operator = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeintopic", 600);
    }

    @AfterAll
    static void stop(KubernetesClient client) throws Exception {
        if (operator != null) {
            operator.close();
        }
        if (brokers != null) {
            brokers.close();
        }
        // deletionPolicy Retain and the brokers are gone: drop the finalizers so the namespace can go
        for (GenericKubernetesResource t : topics(client).list().getItems()) {
            topics(client).withName(t.getMetadata().getName()).edit(r -> {
                r.getMetadata().setFinalizers(List.of());
                return r;
            });
        }
        client.namespaces().withName(NAMESPACE).delete();
    }

    @SuppressWarnings("unchecked")
    private static boolean ready(GenericKubernetesResource r) {
        Object status = r.getAdditionalProperties().get("status");
        if (status == null) {
            return false;
        }
        Object conditions = ((Map<String, Object>) status).get("conditions");
        return conditions != null && ((List<Map<String, Object>>) conditions).stream()
                .anyMatch(c -> "Ready".equals(c.get("type")) && "True".equals(c.get("status")));
    }

    @Test
    void thousandTopicsConverge(KubernetesClient client) throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < TOPICS; i++) {
            topics(client).resource(resource("SkeinTopic", String.format("t-%04d", i), Map.of("cluster", "alpha",
                    "partitions", 1, "replicationFactor", 3, "minInSyncReplicas", 2))).create();
        }
        long appliedMs = (System.nanoTime() - start) / 1_000_000;
        long[] peakRss = {0};
        await().atMost(Duration.ofMinutes(15)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            peakRss[0] = Math.max(peakRss[0], operator.residentKib());
            long ready = topics(client).list().getItems().stream().filter(SkeinTopicScaleE2E::ready).count();
            assertThat(ready).as("Ready SkeinTopics").isEqualTo(TOPICS);
        });
        long convergedMs = (System.nanoTime() - start) / 1_000_000;
        try (Admin admin = brokers.admin()) {
            Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            assertThat(names.stream().filter(n -> n.startsWith("t-")).collect(Collectors.toSet())).hasSize(TOPICS);
        }
        System.out.printf("SkeinTopicScaleE2E: %d SkeinTopics (1 partition, RF 3, min ISR 2) applied in %d ms, all Ready "
                + "and in the cluster after %d ms; operator RSS peak %d KiB, now %d KiB%n", TOPICS, appliedMs,
                convergedMs, peakRss[0], operator.residentKib());
    }
}
