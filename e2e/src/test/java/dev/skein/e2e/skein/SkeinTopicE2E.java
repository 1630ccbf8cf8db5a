package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static dev.skein.e2e.skein.SkeinResources.GROUPS;
import static dev.skein.e2e.skein.SkeinResources.TOPICS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * SkeinTopic and SkeinConsumerGroup end to end: the generated CRDs installed into the real API
 * server (CEL rules enforced there), the operator jar running as a process against it, and three
 * real Skein brokers (the broker jar, on loopback) whose topics and groups the operator manages. Every check of the topic goes
 * through the Kafka Admin client, as a user would.
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinTopicE2E {
    private static final String NAMESPACE = "skein-topic-e2e";
    private static final String CLUSTER = "alpha";
    private static final Duration CONVERGE = Duration.ofSeconds(60);
    /** The operator re-reads every topic this often, so a no-op reconcile happens within a test's patience. */
    private static final int RESYNC_SECONDS = 4;

    private static BrokerCluster brokers;
    private static OperatorProcess operator;
    private static Admin admin;

    @RegisterExtension
    static final TestWatcher LOGS_ON_FAILURE = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            System.err.printf("%n==== %s failed; operator log:%n%s%n==== brokers:%n%s%n", context.getDisplayName(),
                    operator == null ? "(not started)" : operator.logTail(60),
                    brokers == null ? "(not started)" : brokers.logs(20));
        }
    };

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws Exception {
        SkeinCrds.install(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        brokers = BrokerCluster.start(3);
        admin = brokers.admin();
        // The brokers run outside Kubernetes, so the SkeinCluster reconciler stays off (--reconcilers):
        // the test plays it and publishes the brokers' address in the status, where the operator's
        // bootstrap resolver reads it.
        clusters(client).resource(resource("SkeinCluster", CLUSTER, Map.of("brokers", 3))).create();
        GenericKubernetesResource cluster = clusters(client).withName(CLUSTER).get();
        cluster.setAdditionalProperty("status", Map.of("bootstrapServers", brokers.bootstrapServers()));
        clusters(client).resource(cluster).updateStatus();

        operator = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeintopic,skeinconsumergroup",
                RESYNC_SECONDS);
        // The operator is up once it has reconciled a first resource.
        topics(client).resource(topic("probe", spec("nowhere", 1, 1))).create();
        await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
            assertThat(operator.isAlive()).as("operator process alive").isTrue();
            assertThat(ready(client, "probe")).containsEntry("status", "False").containsEntry("reason", "ClusterNotFound");
        });
    }

    @AfterAll
    static void stop(KubernetesClient client) throws Exception {
        try {
            if (operator != null && operator.isAlive()) {
                // while the operator runs, so its finalizers are honoured
                topics(client).delete();
                groups(client).delete();
                await().atMost(CONVERGE).until(() -> topics(client).list().getItems().isEmpty()
                        && groups(client).list().getItems().isEmpty());
            }
        } finally {
            if (operator != null) {
                operator.close();
            }
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
            }
            if (brokers != null) {
                brokers.close();
            }
            for (var resources : List.of(topics(client), groups(client))) {
                for (GenericKubernetesResource t : resources.list().getItems()) {
                    // only if the operator died: drop the finalizers so the namespace can go
                    resources.withName(t.getMetadata().getName()).edit(r -> {
                        r.getMetadata().setFinalizers(List.of());
                        return r;
                    });
                }
            }
            client.namespaces().withName(NAMESPACE).delete();
        }
    }

    private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> topicsApi(KubernetesClient client) {
        return client.genericKubernetesResources(TOPICS);
    }

    private static io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<GenericKubernetesResource,
            GenericKubernetesResourceList, Resource<GenericKubernetesResource>> topics(KubernetesClient client) {
        return topicsApi(client).inNamespace(NAMESPACE);
    }

    private static io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<GenericKubernetesResource,
            GenericKubernetesResourceList, Resource<GenericKubernetesResource>> groups(KubernetesClient client) {
        return client.genericKubernetesResources(GROUPS).inNamespace(NAMESPACE);
    }

    private static io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<GenericKubernetesResource,
            GenericKubernetesResourceList, Resource<GenericKubernetesResource>> clusters(KubernetesClient client) {
        return client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE);
    }

    private static GenericKubernetesResource resource(String kind, String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder().withApiVersion("skein.dev/v1alpha1").withKind(kind)
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", spec).build();
    }

    private static GenericKubernetesResource topic(String name, Map<String, Object> spec) {
        return resource("SkeinTopic", name, spec);
    }

    private static Map<String, Object> spec(String cluster, int partitions, int replicationFactor) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("cluster", cluster);
        spec.put("partitions", partitions);
        spec.put("replicationFactor", replicationFactor);
        return spec;
    }

    @SuppressWarnings("unchecked")
    private static GenericKubernetesResource editSpec(KubernetesClient client, String name,
                                                      UnaryOperator<Map<String, Object>> change) {
        return topics(client).withName(name).edit(r -> {
            Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) r.getAdditionalProperties().get("spec"));
            r.getAdditionalProperties().put("spec", change.apply(spec));
            return r;
        });
    }

    /** The Ready condition of a SkeinTopic (empty map while there is none). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> ready(KubernetesClient client, String name) {
        GenericKubernetesResource r = topics(client).withName(name).get();
        Map<String, Object> status = r == null ? null : (Map<String, Object>) r.getAdditionalProperties().get("status");
        if (status == null || status.get("conditions") == null) {
            return Map.of();
        }
        return ((List<Map<String, Object>>) status.get("conditions")).stream()
                .filter(c -> "Ready".equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> status(KubernetesClient client, String name) {
        return (Map<String, Object>) topics(client).withName(name).get().getAdditionalProperties().get("status");
    }

    private static Optional<TopicDescription> describe(String topic) throws Exception {
        try {
            return Optional.of(admin.describeTopics(Set.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private static Config configs(String topic) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(Set.of(r)).all().get(10, TimeUnit.SECONDS).get(r);
    }

    private static void assertRejected(Runnable call, String... messageParts) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(KubernetesClientException.class, e -> {
            assertThat(e.getCode()).isEqualTo(422);
            assertThat(e.getMessage()).contains(messageParts);
        });
    }

    @Test
    void invalidSpecsAreRejectedAtAdmissionWithMessagesNamingTheField(KubernetesClient client) {
        Map<String, Object> minIsrAboveRf = spec(CLUSTER, 1, 2);
        minIsrAboveRf.put("minInSyncReplicas", 3);
        assertRejected(() -> topics(client).resource(topic("bad-min-isr", minIsrAboveRf)).create(),
                "spec.minInSyncReplicas", "spec.minInSyncReplicas must not exceed spec.replicationFactor");

        assertRejected(() -> topics(client).resource(topic("bad-partitions", spec(CLUSTER, 0, 1))).create(),
                "spec.partitions", "greater than or equal to 1");

        Map<String, Object> minIsrInConfig = spec(CLUSTER, 1, 1);
        minIsrInConfig.put("config", Map.of("min.insync.replicas", "1"));
        assertRejected(() -> topics(client).resource(topic("bad-config", minIsrInConfig)).create(),
                "spec.config", "use spec.minInSyncReplicas");

        assertRejected(() -> clusters(client).resource(resource("SkeinCluster", "bad-voters",
                Map.of("brokers", 1, "controllerVoters", 3))).create(),
                "spec.controllerVoters must not exceed spec.brokers");
        assertRejected(() -> clusters(client).resource(resource("SkeinCluster", "bad-rack",
                Map.of("brokers", 3, "rack", Map.of("topologyKey", "example.com/row")))).create(),
                "spec.rack.topologyKey", "must be topology.kubernetes.io/zone or topology.kubernetes.io/region");
        assertRejected(() -> clusters(client).resource(resource("SkeinCluster", "bad-rack-config",
                Map.of("brokers", 3, "config", Map.of("broker.rack", "a")))).create(),
                "spec.config must not set broker.rack");

        assertThat(topics(client).list().getItems()).extracting(r -> r.getMetadata().getName())
                .doesNotContain("bad-min-isr", "bad-partitions", "bad-config");
    }

    @Test
    void clusterAndTopicNameAreImmutable(KubernetesClient client) {
        topics(client).resource(topic("immutable", spec("nowhere", 1, 1))).create();
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "immutable"))
                .containsEntry("status", "False").containsEntry("reason", "ClusterNotFound")
                .hasEntrySatisfying("message", m -> assertThat((String) m).contains("spec.cluster nowhere")));

        assertRejected(() -> editSpec(client, "immutable", s -> {
            s.put("cluster", CLUSTER);
            return s;
        }), "spec.cluster is immutable");
        assertRejected(() -> editSpec(client, "immutable", s -> {
            s.put("topicName", "other");
            return s;
        }), "spec.topicName is immutable");
    }

    @Test
    void topicIsCreatedWithTheRequestedPartitionsReplicationFactorAndMinIsr(KubernetesClient client) throws Exception {
        Map<String, Object> spec = spec(CLUSTER, 6, 3);
        spec.put("minInSyncReplicas", 2);
        spec.put("config", Map.of("retention.ms", "3600000"));
        long appliedNanos = System.nanoTime();
        topics(client).resource(topic("orders", spec)).create();
        await().atMost(CONVERGE).pollInterval(Duration.ofMillis(50)).until(() -> describe("orders").isPresent());
        long toExistMs = (System.nanoTime() - appliedNanos) / 1_000_000;
        await().atMost(CONVERGE).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(ready(client, "orders")).containsEntry("status", "True"));
        long toReadyMs = (System.nanoTime() - appliedNanos) / 1_000_000;
        System.out.printf("SkeinTopicE2E: SkeinTopic applied -> topic exists in %d ms, -> Ready=True in %d ms; "
                + "operator RSS %d KiB%n", toExistMs, toReadyMs, operator.residentKib());

        TopicDescription topic = describe("orders").orElseThrow();
        assertThat(topic.partitions()).hasSize(6);
        assertThat(topic.partitions()).allSatisfy(p -> {
            assertThat(p.replicas()).hasSize(3);
            assertThat(p.replicas()).extracting(n -> n.id()).doesNotHaveDuplicates();
        });
        Config config = configs("orders");
        assertThat(config.get("min.insync.replicas").value()).isEqualTo("2");
        assertThat(config.get("retention.ms").value()).isEqualTo("3600000");
        Map<String, Object> status = status(client, "orders");
        assertThat(status).containsEntry("topicId", topic.topicId().toString()).containsEntry("partitions", 6)
                .containsEntry("replicationFactor", 3).containsEntry("observedGeneration", 1);

        // no churn: the periodic reconciles that find nothing new write nothing (same resourceVersion)
        String version = topics(client).withName("orders").get().getMetadata().getResourceVersion();
        await("no-op reconciles leave the SkeinTopic unchanged")
                .during(Duration.ofSeconds(3L * RESYNC_SECONDS)).atMost(Duration.ofSeconds(5L * RESYNC_SECONDS))
                .until(() -> topics(client).withName("orders").get().getMetadata().getResourceVersion().equals(version));
    }

    @Test
    void secondResourceForTheSameTopicGetsResourceConflict(KubernetesClient client) throws Exception {
        topics(client).resource(topic("payments", spec(CLUSTER, 2, 1))).create();
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "payments")).containsEntry("status", "True"));
        Map<String, Object> sameTopic = spec(CLUSTER, 9, 1);
        sameTopic.put("topicName", "payments");

        topics(client).resource(topic("payments-copy", sameTopic)).create();

        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "payments-copy"))
                .containsEntry("status", "False").containsEntry("reason", "ResourceConflict")
                .hasEntrySatisfying("message", m -> assertThat((String) m).contains("SkeinTopic payments")));
        assertThat(describe("payments").orElseThrow().partitions()).hasSize(2);
        assertThat(ready(client, "payments")).containsEntry("status", "True");
    }

    @Test
    void replicationFactorAboveTheBrokerCountIsReportedAndNothingCreated(KubernetesClient client) throws Exception {
        topics(client).resource(topic("too-wide", spec(CLUSTER, 1, 4))).create();

        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "too-wide"))
                .containsEntry("status", "False").containsEntry("reason", "InvalidSpec")
                .hasEntrySatisfying("message", m -> assertThat((String) m)
                        .contains("spec.replicationFactor 4 exceeds the cluster's 3 broker(s)")));
        assertThat(describe("too-wide")).isEmpty();
    }

    @Test
    void partitionIncreaseIsAppliedAndDecreaseIsRefusedWithACondition(KubernetesClient client) throws Exception {
        topics(client).resource(topic("events", spec(CLUSTER, 2, 3))).create();
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "events")).containsEntry("status", "True"));

        editSpec(client, "events", s -> {
            s.put("partitions", 5);
            return s;
        });
        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(describe("events").orElseThrow().partitions()).hasSize(5);
            assertThat(status(client, "events")).containsEntry("partitions", 5).containsEntry("observedGeneration", 2);
            assertThat(ready(client, "events")).containsEntry("status", "True");
        });

        editSpec(client, "events", s -> {
            s.put("partitions", 3);
            s.put("config", Map.of("retention.ms", "1000"));
            return s;
        });
        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(status(client, "events")).containsEntry("observedGeneration", 3);
            assertThat(ready(client, "events")).containsEntry("status", "False").containsEntry("reason", "NotSupported")
                    .hasEntrySatisfying("message", m -> assertThat((String) m)
                            .contains("spec.partitions 3 is below the topic's 5 partitions"));
        });
        // nothing of the refused spec was applied: partitions kept, the config change not made either
        assertThat(describe("events").orElseThrow().partitions()).hasSize(5);
        assertThat(Optional.ofNullable(configs("events").get("retention.ms")).map(ConfigEntry::source))
                .isNotEqualTo(Optional.of(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG));
    }

    @Test
    void replicationFactorChangeIsAppliedByReassignment(KubernetesClient client) throws Exception {
        topics(client).resource(topic("audit", spec(CLUSTER, 3, 1))).create();
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "audit")).containsEntry("status", "True"));

        editSpec(client, "audit", s -> {
            s.put("replicationFactor", 3);
            return s;
        });
        await().atMost(CONVERGE).untilAsserted(() -> {
            for (TopicPartitionInfo p : describe("audit").orElseThrow().partitions()) {
                assertThat(p.replicas()).hasSize(3);
                assertThat(p.isr()).hasSize(3);
            }
            assertThat(ready(client, "audit")).containsEntry("status", "True");
            assertThat(status(client, "audit")).containsEntry("replicationFactor", 3);
        });
    }

    @Test
    void existingTopicIsAdoptedOnlyWhenItMatches(KubernetesClient client) throws Exception {
        admin.createTopics(List.of(new NewTopic("legacy", 2, (short) 1), new NewTopic("matching", 2, (short) 2)))
                .all().get(10, TimeUnit.SECONDS);

        topics(client).resource(topic("legacy", spec(CLUSTER, 4, 1))).create();
        topics(client).resource(topic("matching", spec(CLUSTER, 2, 2))).create();

        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(ready(client, "legacy")).containsEntry("status", "False")
                    .containsEntry("reason", "ExistingTopicMismatch")
                    .hasEntrySatisfying("message", m -> assertThat((String) m).contains("partitions 2 (spec 4)"));
            assertThat(ready(client, "matching")).containsEntry("status", "True");
        });
        assertThat(describe("legacy").orElseThrow().partitions()).hasSize(2);
        assertThat(status(client, "matching")).containsEntry("topicId", describe("matching").orElseThrow().topicId().toString());
    }

    @Test
    void deletionPolicyDeleteDeletesTheTopicAndRetainKeepsIt(KubernetesClient client) throws Exception {
        Map<String, Object> deleted = spec(CLUSTER, 1, 1);
        deleted.put("deletionPolicy", "Delete");
        topics(client).resource(topic("scratch", deleted)).create();
        topics(client).resource(topic("kept", spec(CLUSTER, 1, 1))).create();
        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(ready(client, "scratch")).containsEntry("status", "True");
            assertThat(ready(client, "kept")).containsEntry("status", "True");
        });
        assertThat(topics(client).withName("kept").get().getMetadata().getFinalizers()).isNotEmpty();

        topics(client).withName("scratch").delete();
        topics(client).withName("kept").delete();

        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(topics(client).withName("scratch").get()).isNull();
            assertThat(topics(client).withName("kept").get()).isNull();
        });
        assertThat(describe("scratch")).isEmpty();
        assertThat(describe("kept")).isPresent();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> groupStatus(KubernetesClient client, String name) {
        Object status = groups(client).withName(name).get().getAdditionalProperties().get("status");
        return status == null ? Map.of() : (Map<String, Object>) status;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> groupCondition(KubernetesClient client, String name, String type) {
        Object conditions = groupStatus(client, name).get("conditions");
        return conditions == null ? Map.of() : ((List<Map<String, Object>>) conditions).stream()
                .filter(c -> type.equals(c.get("type"))).findFirst().orElse(Map.of());
    }

    private static Map<TopicPartition, Long> committed(String group) throws Exception {
        Map<TopicPartition, Long> out = new java.util.HashMap<>();
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS)
                .forEach((tp, om) -> out.put(tp, om.offset()));
        return out;
    }

    @Test
    void consumerGroupShowsLagAndAppliesAnOffsetResetOnceTheGroupIsEmpty(KubernetesClient client) throws Exception {
        topics(client).resource(topic("clicks", spec(CLUSTER, 2, 3))).create();
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(ready(client, "clicks")).containsEntry("status", "True"));
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>("clicks", i % 2, "k" + i, "v" + i)).get(10, TimeUnit.SECONDS);
            }
        }
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.bootstrapServers());
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "readers");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c);
        try {
            consumer.subscribe(List.of("clicks"));
            await().atMost(CONVERGE).until(() -> !consumer.poll(Duration.ofMillis(200)).isEmpty());
            // a lagging reader: it has read 10 + 20 of the 100 records and stays in the group
            consumer.commitSync(Map.of(new TopicPartition("clicks", 0), new OffsetAndMetadata(10),
                    new TopicPartition("clicks", 1), new OffsetAndMetadata(20)));

            Map<String, Object> spec = new LinkedHashMap<>();
            spec.put("cluster", CLUSTER);
            spec.put("groupId", "readers");
            spec.put("offsetReset", Map.of("to", "Earliest"));
            groups(client).resource(resource("SkeinConsumerGroup", "readers", spec)).create();

            await().atMost(CONVERGE).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(50)); // stay an active member
                assertThat(groupStatus(client, "readers")).containsEntry("members", 1).containsEntry("totalLag", 70)
                        .containsEntry("state", "Stable");
                assertThat(groupCondition(client, "readers", "OffsetReset")).containsEntry("status", "False")
                        .containsEntry("reason", "WaitingForInactiveGroup");
            });
            assertThat(committed("readers")).containsEntry(new TopicPartition("clicks", 0), 10L);
        } finally {
            consumer.close();
        }

        // the group is empty now: the reset is applied, once
        await().atMost(CONVERGE).untilAsserted(() -> {
            assertThat(groupCondition(client, "readers", "OffsetReset")).containsEntry("status", "True")
                    .containsEntry("reason", "Applied");
            assertThat(groupStatus(client, "readers")).containsEntry("members", 0).containsEntry("totalLag", 100);
        });
        assertThat(committed("readers")).containsEntry(new TopicPartition("clicks", 0), 0L)
                .containsEntry(new TopicPartition("clicks", 1), 0L);
        admin.alterConsumerGroupOffsets("readers", Map.of(new TopicPartition("clicks", 0), new OffsetAndMetadata(50),
                new TopicPartition("clicks", 1), new OffsetAndMetadata(50))).all().get(10, TimeUnit.SECONDS);
        await("the applied reset is not applied again").during(Duration.ofSeconds(3L * RESYNC_SECONDS))
                .atMost(Duration.ofSeconds(5L * RESYNC_SECONDS))
                .until(() -> committed("readers").get(new TopicPartition("clicks", 0)) == 50L);
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(groupStatus(client, "readers"))
                .containsEntry("totalLag", 0));

        // the operator's /metrics: the group's lag per partition, and reconcile counts per controller
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpRequest scrape = java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + operator.httpPort() + "/metrics")).build();
        String metrics = http.send(scrape, java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        assertThat(metrics.lines().filter(l -> l.startsWith("skein_consumer_group_lag{")
                && l.contains("group=\"readers\"") && l.contains("topic=\"clicks\"")).toList())
                .as(metrics.lines().filter(l -> l.startsWith("skein_")).toList().toString()).hasSize(2)
                .allSatisfy(l -> assertThat(l).endsWith(" 0.0"));
        assertThat(metrics).contains("skein_consumer_group_total_lag{group=\"readers\",namespace=\"" + NAMESPACE + "\"}")
                .contains("skein_operator_reconcile_seconds_count{controller=\"skeintopic\"")
                .contains("skein_operator_reconcile_seconds_count{controller=\"skeinconsumergroup\"");
    }
}
