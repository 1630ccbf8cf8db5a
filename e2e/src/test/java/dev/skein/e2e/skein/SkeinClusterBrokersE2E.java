package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A SkeinCluster of three brokers running as pods: the operator (both reconcilers) creates the
 * StatefulSet, the process kubelet runs the broker jar in each pod with the ConfigMap's
 * {@code node-<ordinal>.properties}, the brokers form their controller quorum over the headless
 * Service's DNS names and turn ready; the cluster reports Ready, and a SkeinTopic on it gets its
 * topic with RF 3 and min ISR 2, which takes acks=all writes.
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinClusterBrokersE2E {
    private static final String NAMESPACE = "skein-brokers-e2e";
    private static final String CLUSTER = "main";
    private static final Duration PATIENCE = Duration.ofSeconds(180);
    private static final ResourceDefinitionContext CLUSTERS = context("SkeinCluster", "skeinclusters");
    private static final ResourceDefinitionContext TOPICS = context("SkeinTopic", "skeintopics");

    private static ProcessKubelet kubelet;
    private static OperatorProcess operator;

    @RegisterExtension
    static final TestWatcher LOGS_ON_FAILURE = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            StringBuilder pods = new StringBuilder();
            for (int i = 0; i < 3 && kubelet != null; i++) {
                String log = kubelet.log(NAMESPACE, CLUSTER + "-broker-" + i, "broker");
                pods.append("---- broker ").append(i).append('\n')
                        .append(log.length() > 3000 ? log.substring(log.length() - 3000) : log).append('\n');
            }
            System.err.printf("%n==== %s failed; operator log:%n%s%n==== broker pods:%n%s", context.getDisplayName(),
                    operator == null ? "(not started)" : operator.logTail(60), pods);
        }
    };

    private static ResourceDefinitionContext context(String kind, String plural) {
        return new ResourceDefinitionContext.Builder().withGroup("skein.dev").withVersion("v1alpha1").withKind(kind)
                .withPlural(plural).withNamespaced(true).build();
    }

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws Exception {
        SkeinCrds.install(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        ImageRegistry images = ImageRegistry.withDefaults()
                .register("skein/broker", List.of(SkeinJars.java(), "-jar", SkeinJars.broker().toString()));
        kubelet = ProcessKubelet.builder(client).namePrefix("skein-node-").nodes(3).zones(3).images(images)
                .build().start();
        operator = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeincluster,skeintopic", 10, true);
    }

    @AfterAll
    static void stop(KubernetesClient client) throws Exception {
        try {
            if (operator != null && operator.isAlive()) {
                topics(client).delete();
                await().atMost(Duration.ofSeconds(60)).until(() -> topics(client).list().getItems().isEmpty());
            }
        } finally {
            if (operator != null) {
                operator.close();
            }
            clusters(client).delete();
            client.pods().inNamespace(NAMESPACE).withGracePeriod(0).delete();
            if (kubelet != null) {
                kubelet.close();
            }
            client.namespaces().withName(NAMESPACE).delete();
        }
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> clusters(KubernetesClient client) {
        return client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE);
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> topics(KubernetesClient client) {
        return client.genericKubernetesResources(TOPICS).inNamespace(NAMESPACE);
    }

    private static GenericKubernetesResource resource(String kind, String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder().withApiVersion("skein.dev/v1alpha1").withKind(kind)
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", spec).build();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> status(GenericKubernetesResource r) {
        Object status = r == null ? null : r.getAdditionalProperties().get("status");
        return status == null ? Map.of() : (Map<String, Object>) status;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> ready(GenericKubernetesResource r) {
        Object conditions = status(r).get("conditions");
        return conditions == null ? Map.of() : ((List<Map<String, Object>>) conditions).stream()
                .filter(c -> "Ready".equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    @Test
    void threeBrokerClusterBecomesReadyAndServesATopicFromASkeinTopic(KubernetesClient client) throws Exception {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("brokers", 3);
        spec.put("jvmOptions", List.of("-Xmx256m"));
        spec.put("storage", Map.of("size", "1Gi"));
        spec.put("config", Map.of("min.insync.replicas", "2", "num.io.threads", "2", "num.network.threads", "2"));
        long applied = System.nanoTime();
        clusters(client).resource(resource("SkeinCluster", CLUSTER, spec)).create();

        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                ready(clusters(client).withName(CLUSTER).get()))
                .containsEntry("status", "True").containsEntry("message", "3/3 brokers ready"));
        long readyMs = (System.nanoTime() - applied) / 1_000_000;
        String bootstrap = (String) status(clusters(client).withName(CLUSTER).get()).get("bootstrapServers");
        assertThat(bootstrap).isEqualTo(CLUSTER + "-bootstrap." + NAMESPACE + ".svc:9092");

        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        adminProps.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        try (Admin admin = Admin.create(adminProps)) {
            await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> assertThat(admin.describeCluster().nodes()
                    .get(10, TimeUnit.SECONDS)).extracting(n -> n.host()).containsExactlyInAnyOrder(
                    "main-broker-0.main-brokers." + NAMESPACE + ".svc", "main-broker-1.main-brokers." + NAMESPACE + ".svc",
                    "main-broker-2.main-brokers." + NAMESPACE + ".svc"));

            Map<String, Object> topic = new LinkedHashMap<>();
            topic.put("cluster", CLUSTER);
            topic.put("partitions", 3);
            topic.put("replicationFactor", 3);
            topic.put("minInSyncReplicas", 2);
            long topicApplied = System.nanoTime();
            topics(client).resource(resource("SkeinTopic", "orders", topic)).create();
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(ready(topics(client).withName("orders").get()))
                    .containsEntry("status", "True"));
            long topicReadyMs = (System.nanoTime() - topicApplied) / 1_000_000;
            System.out.printf("SkeinClusterBrokersE2E: SkeinCluster of 3 applied -> Ready in %d ms; SkeinTopic applied "
                    + "-> Ready in %d ms; operator RSS %d KiB%n", readyMs, topicReadyMs, operator.residentKib());

            TopicDescription orders = admin.describeTopics(Set.of("orders")).allTopicNames().get(10, TimeUnit.SECONDS)
                    .get("orders");
            assertThat(orders.partitions()).hasSize(3)
                    .allSatisfy(p -> assertThat(p.replicas()).hasSize(3));
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "orders");
            assertThat(admin.describeConfigs(Set.of(resource)).all().get(10, TimeUnit.SECONDS).get(resource)
                    .get("min.insync.replicas").value()).isEqualTo("2");
        }

        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            List<Future<org.apache.kafka.clients.producer.RecordMetadata>> sends = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                sends.add(producer.send(new ProducerRecord<>("orders", "k" + i, "v" + i)));
            }
            for (Future<org.apache.kafka.clients.producer.RecordMetadata> send : sends) {
                assertThat(send.get(30, TimeUnit.SECONDS).offset()).isGreaterThanOrEqualTo(0);
            }
        }
    }
}
