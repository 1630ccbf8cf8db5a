package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static dev.skein.e2e.skein.SkeinResources.TOPICS;
import static dev.skein.e2e.skein.SkeinResources.condition;
import static dev.skein.e2e.skein.SkeinResources.podReady;
import static dev.skein.e2e.skein.SkeinResources.resource;
import static dev.skein.e2e.skein.SkeinResources.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A SkeinCluster of three brokers running as pods: the operator (both reconcilers) creates the
 * StatefulSet, the process kubelet runs the broker jar in each pod with the ConfigMap's
 * {@code node-<ordinal>.properties}, the brokers form their controller quorum over the headless
 * Service's DNS names and turn ready; the cluster reports Ready, and a SkeinTopic on it gets its
 * topic with RF 3 and min ISR 2, which takes acks=all writes. Then a config change rolls the brokers
 * one at a time while an acks=all producer runs: no send fails and no acknowledged record is lost.
 */
@ExtendWith(ControlPlaneExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SkeinClusterBrokersE2E {
    private static final String NAMESPACE = "skein-brokers-e2e";
    private static final String CLUSTER = "main";
    private static final Duration PATIENCE = Duration.ofSeconds(180);

    private static ProcessKubelet kubelet;
    private static OperatorProcess operator;

    @RegisterExtension
    static final TestWatcher LOGS_ON_FAILURE = SkeinResources.logsOnFailure(() -> kubelet, () -> operator, NAMESPACE,
            CLUSTER, 3, 3000);

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws Exception {
        kubelet = BrokerPodsFixture.start(client, NAMESPACE, 3);
        operator = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeincluster,skeintopic", 10, true);
    }

    @AfterAll
    static void stop(KubernetesClient client) throws Exception {
        BrokerPodsFixture.stop(client, NAMESPACE, operator, kubelet);
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> clusters(KubernetesClient client) {
        return client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE);
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> topics(KubernetesClient client) {
        return client.genericKubernetesResources(TOPICS).inNamespace(NAMESPACE);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> ready(GenericKubernetesResource r) {
        Object conditions = status(r).get("conditions");
        return conditions == null ? Map.of() : ((List<Map<String, Object>>) conditions).stream()
                .filter(c -> "Ready".equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    @Test
    @Order(1)
    @SuppressWarnings("unchecked")
    void threeBrokerClusterBecomesReadyAndServesATopicFromASkeinTopic(KubernetesClient client) throws Exception {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("brokers", 3);
        spec.put("jvmOptions", List.of("-Xmx256m"));
        spec.put("storage", Map.of("size", "1Gi"));
        spec.put("rack", Map.of("topologyKey", "topology.kubernetes.io/zone"));
        spec.put("config", Map.of("min.insync.replicas", "2", "num.io.threads", "2", "num.network.threads", "2"));
        long applied = System.nanoTime();
        clusters(client).resource(resource("SkeinCluster", NAMESPACE, CLUSTER, spec)).create();

        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                ready(clusters(client).withName(CLUSTER).get()))
                .containsEntry("status", "True").containsEntry("message", "3/3 brokers ready"));
        long readyMs = (System.nanoTime() - applied) / 1_000_000;
        String bootstrap = (String) status(clusters(client).withName(CLUSTER).get()).get("bootstrapServers");
        assertThat(bootstrap).isEqualTo(CLUSTER + "-bootstrap." + NAMESPACE + ".svc:9092");
        // replication health read from the cluster: every broker in every ISR, an active controller
        await().atMost(PATIENCE).untilAsserted(() -> {
            Map<String, Object> status = status(clusters(client).withName(CLUSTER).get());
            assertThat(status).containsEntry("underReplicatedPartitions", 0).containsEntry("offlinePartitions", 0)
                    .containsKey("activeController");
            assertThat((List<Map<String, Object>>) status.get("brokers")).hasSize(3).allSatisfy(b -> {
                assertThat(b).containsEntry("inAllIsrs", true);
                assertThat((String) b.get("pod")).isEqualTo(CLUSTER + "-broker-" + b.get("nodeId"));
                assertThat((String) b.get("node")).startsWith("skein-node-");
            });
        });

        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        adminProps.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        try (Admin admin = Admin.create(adminProps)) {
            await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> assertThat(admin.describeCluster().nodes()
                    .get(10, TimeUnit.SECONDS)).extracting(n -> n.host()).containsExactlyInAnyOrder(
                    "main-broker-0.main-brokers." + NAMESPACE + ".svc", "main-broker-1.main-brokers." + NAMESPACE + ".svc",
                    "main-broker-2.main-brokers." + NAMESPACE + ".svc"));

            // rack awareness: each broker's rack is its node's zone (Kubernetes copies the label onto the pod)
            Map<String, String> zoneOfNode = new LinkedHashMap<>();
            client.nodes().list().getItems().forEach(n -> zoneOfNode.put(n.getMetadata().getName(),
                    n.getMetadata().getLabels().get("topology.kubernetes.io/zone")));
            Map<Integer, String> expectedRacks = new LinkedHashMap<>();
            for (Pod pod : brokerPods(client)) {
                expectedRacks.put(Integer.parseInt(pod.getMetadata().getLabels().get("apps.kubernetes.io/pod-index")),
                        zoneOfNode.get(pod.getSpec().getNodeName()));
            }
            Map<Integer, String> racks = new LinkedHashMap<>();
            admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).forEach(n -> racks.put(n.id(), n.rack()));
            assertThat(racks).isEqualTo(expectedRacks);
            assertThat(Set.copyOf(racks.values())).as("three brokers spread over three zones").hasSize(3);

            Map<String, Object> topic = new LinkedHashMap<>();
            topic.put("cluster", CLUSTER);
            topic.put("partitions", 3);
            topic.put("replicationFactor", 3);
            topic.put("minInSyncReplicas", 2);
            long topicApplied = System.nanoTime();
            topics(client).resource(resource("SkeinTopic", NAMESPACE, "orders", topic)).create();
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

    /** The broker pods of the cluster. */
    private static List<Pod> brokerPods(KubernetesClient client) {
        return client.pods().inNamespace(NAMESPACE).withLabel("skein.dev/cluster", CLUSTER).list().getItems();
    }

    /**
     * A config change rolls the brokers one at a time while an idempotent acks=all producer runs: no
     * send fails, at most one broker is down at a sample, and every acknowledged record is read back.
     * Each restarted broker comes back in a new pod with a new IP (the process kubelet, like a real
     * one, gives every pod its own), which the other voters reach through the headless Service's name.
     */
    @Test
    @Order(2)
    @SuppressWarnings("unchecked")
    void configChangeRollsTheBrokersOneAtATimeWithoutAFailedAcksAllSend(KubernetesClient client) throws Exception {
        String bootstrap = (String) status(clusters(client).withName(CLUSTER).get()).get("bootstrapServers");
        String oldRevision = client.apps().statefulSets().inNamespace(NAMESPACE).withName(CLUSTER + "-broker").get()
                .getStatus().getUpdateRevision();
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong sent = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        Thread load = new Thread(() -> {
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                // bounded (a million small records at most) until the roll is over, paced by the cluster:
                // every 10 records wait until the ISR has them (acks=all), so the load follows the roll
                for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                    sent.incrementAndGet();
                    producer.send(new ProducerRecord<>("orders", "k" + i, "roll-" + i), (metadata, e) -> {
                        if (e == null) {
                            acked.incrementAndGet();
                        } else {
                            failure.compareAndSet(null, e);
                        }
                    });
                    if (i % 10 == 9) {
                        producer.flush();
                    }
                }
                producer.flush();
            }
        }, "acks-all-load");
        load.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> acked.get() >= 100);

        Object controllerBefore = status(clusters(client).withName(CLUSTER).get()).get("activeController");
        long changed = System.nanoTime();
        clusters(client).withName(CLUSTER).edit(r -> {
            Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) r.getAdditionalProperties().get("spec"));
            Map<String, Object> config = new LinkedHashMap<>((Map<String, Object>) spec.get("config"));
            config.put("log.retention.ms", "86400000");
            spec.put("config", config);
            r.getAdditionalProperties().put("spec", spec);
            return r;
        });
        AtomicInteger mostNotReady = new AtomicInteger();
        await().atMost(Duration.ofSeconds(400)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            List<Pod> pods = brokerPods(client);
            mostNotReady.accumulateAndGet((int) (3 - pods.stream().filter(SkeinResources::podReady).count()),
                    Math::max);
            StatefulSet sts = client.apps().statefulSets().inNamespace(NAMESPACE).withName(CLUSTER + "-broker").get();
            String revision = sts.getStatus().getUpdateRevision();
            assertThat(revision).isNotEqualTo(oldRevision);
            assertThat(pods).hasSize(3).allSatisfy(p -> {
                assertThat(p.getMetadata().getLabels()).containsEntry("controller-revision-hash", revision);
                assertThat(podReady(p)).isTrue();
            });
            GenericKubernetesResource cluster = clusters(client).withName(CLUSTER).get();
            assertThat(condition(cluster, "Progressing")).containsEntry("status", "False").containsEntry("reason", "UpToDate");
            assertThat(condition(cluster, "Ready")).containsEntry("status", "True");
        });
        long rolledMs = (System.nanoTime() - changed) / 1_000_000;
        stop.set(true);
        load.join(TimeUnit.SECONDS.toMillis(150));

        System.out.printf("SkeinClusterBrokersE2E: config change rolled 3 brokers in %d ms; %d acks=all records sent, "
                + "%d acknowledged, at most %d broker(s) not ready at a sample%n", rolledMs, sent.get(), acked.get(),
                mostNotReady.get());
        assertThat(failure.get()).as("a failed acks=all send").isNull();
        assertThat(acked.get()).isEqualTo(sent.get());
        assertThat(mostNotReady.get()).as("brokers not ready at once").isLessThanOrEqualTo(1);
        List<String> restarts = operator.logTail(400).lines().filter(l -> l.contains("rolling update: restarting broker"))
                .map(l -> l.replaceAll(".*rolling update: restarting broker (\\d+).*", "$1")).toList();
        assertThat(restarts).as("restarts").hasSize(3).doesNotHaveDuplicates();
        assertThat(restarts.getLast()).as("the active controller (%s before the roll) restarts last", controllerBefore)
                .isEqualTo(String.valueOf(controllerBefore));

        // Every acknowledged record is there, once, after the roll.
        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        BitSet seen = new BitSet();
        long duplicates = 0;
        long rolled = acked.get();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            List<TopicPartition> partitions = consumer.partitionsFor("orders").stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.value().startsWith("roll-")) {
                        int i = Integer.parseInt(record.value().substring(5));
                        if (seen.get(i)) {
                            duplicates++;
                        }
                        seen.set(i);
                    }
                }
            }
        }
        System.out.printf("SkeinClusterBrokersE2E: read back %d of %d acknowledged records after the roll, %d duplicates%n",
                seen.cardinality(), rolled, duplicates);
        assertThat(seen.cardinality()).as("acknowledged records read back").isEqualTo((int) rolled);
        assertThat(seen.nextClearBit(0)).as("first acknowledged record missing").isEqualTo((int) rolled);
        assertThat(duplicates).as("duplicates of an idempotent producer").isZero();
    }

    /**
     * librdkafka (kcat) in a pod of the cluster, as an application would run: it produces with
     * acks=all to a SkeinTopic through the bootstrap Service's DNS name, follows the brokers'
     * advertised pod names, and reads the records back.
     */
    @Test
    @Order(3)
    void kcatInAPodProducesAndConsumesThroughTheBootstrapService(KubernetesClient client) {
        topics(client).resource(resource("SkeinTopic", NAMESPACE, "kcat-orders",
                Map.of("cluster", CLUSTER, "partitions", 2, "replicationFactor", 3, "minInSyncReplicas", 2))).create();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(ready(topics(client).withName("kcat-orders").get()))
                .containsEntry("status", "True"));
        String bootstrap = (String) status(clusters(client).withName(CLUSTER).get()).get("bootstrapServers");
        String script = String.join("\n",
                "set -e",
                "for i in 1 2 3 4 5; do echo \"kcat-$i:value-$i\"; done"
                        + " | kcat -b " + bootstrap + " -P -t kcat-orders -K: -X acks=all",
                "kcat -b " + bootstrap + " -C -t kcat-orders -o beginning -e -q -f 'consumed %k=%s\\n'");
        client.pods().inNamespace(NAMESPACE).resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata().withName("kcat").withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().withRestartPolicy("Never")
                .addNewContainer().withName("kcat").withImage("skein-e2e/shell").withArgs(script).endContainer()
                .endSpec().build()).create();

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(client.pods().inNamespace(NAMESPACE).withName("kcat").get()
                .getStatus().getPhase()).as("kcat pod phase; log:%n%s", kubelet.log(NAMESPACE, "kcat", "kcat"))
                .isIn("Succeeded", "Failed"));
        String log = kubelet.log(NAMESPACE, "kcat", "kcat");
        System.out.printf("SkeinClusterBrokersE2E: kcat pod log:%n%s%n", log);
        assertThat(client.pods().inNamespace(NAMESPACE).withName("kcat").get().getStatus().getPhase())
                .as("kcat pod; log:%n%s", log).isEqualTo("Succeeded");
        assertThat(log.lines().filter(l -> l.startsWith("consumed ")).sorted().toList()).containsExactly(
                "consumed kcat-1=value-1", "consumed kcat-2=value-2", "consumed kcat-3=value-3",
                "consumed kcat-4=value-4", "consumed kcat-5=value-5");
        client.pods().inNamespace(NAMESPACE).withName("kcat").delete();
    }

    /** A SkeinCluster naming an image that does not exist, or a StorageClass that does not, says so in Ready. */
    @Test
    @Order(4)
    void aMissingImageOrStorageClassIsNamedInTheReadyCondition(KubernetesClient client) {
        clusters(client).resource(resource("SkeinCluster", NAMESPACE, "bad-image",
                Map.of("brokers", 1, "image", "skein/does-not-exist:1.0"))).create();
        clusters(client).resource(resource("SkeinCluster", NAMESPACE, "bad-class",
                Map.of("brokers", 1, "storage", Map.of("size", "1Gi", "storageClassName", "no-such-class")))).create();
        try {
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(ready(clusters(client).withName("bad-image").get()))
                    .containsEntry("status", "False").containsEntry("reason", "ImagePullFailed")
                    .hasEntrySatisfying("message", m -> assertThat((String) m)
                            .contains("pod bad-image-broker-0 cannot pull image skein/does-not-exist:1.0")));
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(ready(clusters(client).withName("bad-class").get()))
                    .containsEntry("status", "False").containsEntry("reason", "StorageClassNotFound")
                    .hasEntrySatisfying("message", m -> assertThat((String) m)
                            .contains("spec.storage.storageClassName no-such-class names no StorageClass")));
            // and each cause once as a Warning Event on its SkeinCluster, for kubectl describe
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(client.v1().events()
                    .inNamespace(NAMESPACE).list().getItems()).extracting(e -> e.getInvolvedObject().getName() + " "
                            + e.getType() + " " + e.getReason())
                    .contains("bad-image Warning ImagePullFailed", "bad-class Warning StorageClassNotFound"));
        } finally {
            clusters(client).withName("bad-image").delete();
            clusters(client).withName("bad-class").delete();
        }
    }
}
