package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static dev.skein.e2e.skein.SkeinResources.condition;
import static dev.skein.e2e.skein.SkeinResources.podReady;
import static dev.skein.e2e.skein.SkeinResources.resource;
import static dev.skein.e2e.skein.SkeinResources.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scaling a SkeinCluster of broker pods: 3 → 5 adds two brokers that turn ready without a restart
 * of the others (no partition is moved onto them); a topic is then placed on brokers 3 and 4 and
 * takes acks=all records. A scale down is refused while a topic has more replicas than would
 * remain (nothing changes), and proceeds once it is gone: 5 → 3 moves every replica off brokers 3
 * and 4 (throttled), and only then removes their pods; every record stays readable, no partition
 * goes offline, an acks=all producer running throughout loses nothing, and the throttle is gone
 * at the end. Last, a scale below the controller voters is refused.
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinClusterScaleE2E {
    private static final String NAMESPACE = "skein-scale-e2e";
    private static final String CLUSTER = "main";
    private static final Duration PATIENCE = Duration.ofSeconds(240);

    private static ProcessKubelet kubelet;
    private static OperatorProcess operator;

    @RegisterExtension
    static final TestWatcher LOGS_ON_FAILURE = SkeinResources.logsOnFailure(() -> kubelet, () -> operator, NAMESPACE,
            CLUSTER, 5, 2500);

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws Exception {
        kubelet = BrokerPodsFixture.start(client, NAMESPACE, 3);
        operator = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeincluster", 10, true);
    }

    @AfterAll
    static void stop(KubernetesClient client) throws Exception {
        BrokerPodsFixture.stop(client, NAMESPACE, operator, kubelet);
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> clusters(KubernetesClient client) {
        return client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE);
    }

    private static GenericKubernetesResource cluster(KubernetesClient client) {
        return clusters(client).withName(CLUSTER).get();
    }

    @SuppressWarnings("unchecked")
    private static void setBrokers(KubernetesClient client, int brokers) {
        clusters(client).withName(CLUSTER).edit(r -> {
            Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) r.getAdditionalProperties().get("spec"));
            spec.put("brokers", brokers);
            r.getAdditionalProperties().put("spec", spec);
            return r;
        });
    }

    private static StatefulSet statefulSet(KubernetesClient client) {
        return client.apps().statefulSets().inNamespace(NAMESPACE).withName(CLUSTER + "-broker").get();
    }

    private static List<Pod> brokerPods(KubernetesClient client) {
        return client.pods().inNamespace(NAMESPACE).withLabel("skein.dev/cluster", CLUSTER).list().getItems();
    }

    private static long ms(long sinceNanos) {
        return (System.nanoTime() - sinceNanos) / 1_000_000;
    }

    /** Every partition of every topic (internal ones too). */
    private static List<Map.Entry<String, TopicPartitionInfo>> partitions(Admin admin) throws Exception {
        Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(10, TimeUnit.SECONDS);
        List<Map.Entry<String, TopicPartitionInfo>> out = new ArrayList<>();
        for (TopicDescription d : admin.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS).values()) {
            d.partitions().forEach(p -> out.add(Map.entry(d.name(), p)));
        }
        return out;
    }

    private static boolean onBrokers(TopicPartitionInfo p, Set<Integer> brokers) {
        return p.replicas().stream().map(Node::id).anyMatch(brokers::contains);
    }

    @Test
    @SuppressWarnings("unchecked")
    void scaleUpAddsReadyBrokersAndScaleDownMovesReplicasOffTheDepartingBrokersBeforeRemovingThem(
            KubernetesClient client) throws Exception {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("brokers", 3);
        spec.put("jvmOptions", List.of("-Xmx200m"));
        spec.put("storage", Map.of("size", "1Gi"));
        spec.put("replicationThrottleBytesPerSecond", 1_048_576);
        spec.put("config", Map.of("min.insync.replicas", "2", "num.io.threads", "2", "num.network.threads", "2",
                "offsets.topic.num.partitions", "3"));
        long applied = System.nanoTime();
        clusters(client).resource(new GenericKubernetesResourceBuilder().withApiVersion("skein.dev/v1alpha1")
                .withKind("SkeinCluster").withNewMetadata().withName(CLUSTER).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", spec).build()).create();
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                condition(cluster(client), "Ready")).containsEntry("status", "True")
                .containsEntry("message", "3/3 brokers ready"));
        long readyMs = ms(applied);
        String bootstrap = (String) status(cluster(client)).get("bootstrapServers");
        Set<String> firstPods = new HashSet<>();
        brokerPods(client).forEach(p -> firstPods.add(p.getMetadata().getUid()));

        // ---- 3 → 5: two new brokers, ready; nobody else restarts
        long scaleUp = System.nanoTime();
        setBrokers(client, 5);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            GenericKubernetesResource c = cluster(client);
            assertThat(condition(c, "Ready")).containsEntry("status", "True").containsEntry("message", "5/5 brokers ready");
            assertThat(brokerPods(client)).hasSize(5).allMatch(SkeinResources::podReady);
            assertThat((List<Map<String, Object>>) status(c).get("brokers")).hasSize(5)
                    .allSatisfy(b -> assertThat(b).containsEntry("inAllIsrs", true).containsKey("node")
                            .containsKey("incarnation"));
        });
        long scaleUpMs = ms(scaleUp);
        Set<String> afterUp = new HashSet<>();
        brokerPods(client).forEach(p -> afterUp.add(p.getMetadata().getUid()));
        assertThat(afterUp).as("the first three pods were not restarted").containsAll(firstPods);

        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        adminProps.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        try (Admin admin = Admin.create(adminProps)) {
            await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> assertThat(
                    admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)).hasSize(5));
            // no automatic rebalance: what existed before stays on brokers 0..2
            assertThat(partitions(admin)).allSatisfy(e -> assertThat(onBrokers(e.getValue(), Set.of(3, 4)))
                    .as("%s-%d moved by a scale up", e.getKey(), e.getValue().partition()).isFalse());

            // ---- a topic on brokers 3 and 4, written with acks=all
            Map<Integer, List<Integer>> assignment = Map.of(0, List.of(3, 4, 0), 1, List.of(4, 3, 1),
                    2, List.of(2, 3, 4), 3, List.of(0, 1, 2));
            // (the broker validates but does not yet apply an explicit assignment in CreateTopics: reassign to it)
            admin.createTopics(List.of(new NewTopic("spread", 4, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
                    .all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, Optional<NewPartitionReassignment>> placement = new LinkedHashMap<>();
            assignment.forEach((p, rs) -> placement.put(new TopicPartition("spread", p),
                    Optional.of(new NewPartitionReassignment(rs))));
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                    admin.alterPartitionReassignments(placement).all().get(10, TimeUnit.SECONDS));
            await().atMost(PATIENCE).ignoreExceptions().untilAsserted(() -> {
                assertThat(admin.listPartitionReassignments().reassignments().get(10, TimeUnit.SECONDS)).isEmpty();
                assertThat(partitions(admin)).filteredOn(e -> e.getKey().equals("spread"))
                        .allSatisfy(e -> assertThat(e.getValue().replicas()).extracting(Node::id)
                                .containsExactlyElementsOf(assignment.get(e.getValue().partition())));
            });
            Map<String, Long> acked = new java.util.concurrent.ConcurrentHashMap<>();
            Properties producerProps = producerProps(bootstrap);
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                    List<Future<RecordMetadata>> sends = new ArrayList<>();
                    for (int i = 0; i < 1000; i++) {
                        sends.add(producer.send(new ProducerRecord<>("spread", "k" + i, "before-" + i)));
                    }
                    for (int i = 0; i < sends.size(); i++) {
                        RecordMetadata m = sends.get(i).get(30, TimeUnit.SECONDS);
                        acked.put("before-" + i, (long) m.partition());
                    }
                }
            });
            assertThat(acked).hasSize(1000);

            // ---- 5 → 3 refused while a topic has 5 replicas: nothing changes
            admin.createTopics(List.of(new NewTopic("wide", 1, (short) 5))).all().get(30, TimeUnit.SECONDS);
            setBrokers(client, 3);
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                GenericKubernetesResource c = cluster(client);
                assertThat(condition(c, "Ready")).containsEntry("status", "False")
                        .containsEntry("reason", "ReplicationFactorAboveBrokers");
                assertThat((String) condition(c, "Ready").get("message")).contains("wide (5 replicas)");
                assertThat(condition(c, "Progressing")).containsEntry("status", "False")
                        .containsEntry("reason", "ReplicationFactorAboveBrokers");
            });
            assertThat(statefulSet(client).getSpec().getReplicas()).isEqualTo(5);
            assertThat(client.configMaps().inNamespace(NAMESPACE).withName(CLUSTER + "-config").get().getData())
                    .containsKey("node-4.properties");
            assertThat(partitions(admin)).filteredOn(e -> e.getKey().equals("spread"))
                    .allSatisfy(e -> assertThat(e.getValue().replicas()).extracting(Node::id)
                            .containsExactlyElementsOf(assignment.get(e.getValue().partition())));

            // ---- the wide topic goes: 5 → 3 proceeds, under an acks=all load
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong sent = new AtomicLong();
            AtomicReference<Exception> failure = new AtomicReference<>();
            Thread load = new Thread(() -> {
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                    for (int i = 0; i < 200_000 && !stop.get(); i++) {
                        String value = "during-" + i;
                        sent.incrementAndGet();
                        producer.send(new ProducerRecord<>("spread", "k" + i, value), (m, e) -> {
                            if (e == null) {
                                acked.put(value, (long) m.partition());
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
            long scaleDown = System.nanoTime();
            admin.deleteTopics(List.of("wide")).all().get(30, TimeUnit.SECONDS);
            AtomicLong movedMs = new AtomicLong(-1);
            AtomicLong shrunkMs = new AtomicLong(-1);
            AtomicInteger mostOffline = new AtomicInteger();
            AtomicBoolean sawScalingDown = new AtomicBoolean();
            AtomicBoolean sawThrottle = new AtomicBoolean();
            AtomicReference<String> violation = new AtomicReference<>();
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(300)).ignoreExceptions().untilAsserted(() -> {
                // read the StatefulSet before the partitions: a shrink seen here happened before that read
                int replicas = statefulSet(client).getSpec().getReplicas();
                List<Pod> pods = brokerPods(client);
                List<Map.Entry<String, TopicPartitionInfo>> all = partitions(admin);
                boolean onDeparting = all.stream().anyMatch(e -> onBrokers(e.getValue(), Set.of(3, 4)));
                if (replicas < 5 && onDeparting) {
                    violation.compareAndSet(null, "StatefulSet at " + replicas + " while a replica is on 3 or 4");
                }
                if (!onDeparting) {
                    movedMs.compareAndSet(-1, ms(scaleDown));
                }
                if (replicas == 3) {
                    shrunkMs.compareAndSet(-1, ms(scaleDown));
                }
                mostOffline.accumulateAndGet((int) all.stream().filter(e -> e.getValue().leader() == null
                        || e.getValue().leader().isEmpty()).count(), Math::max);
                GenericKubernetesResource c = cluster(client);
                Map<String, Object> progressing = condition(c, "Progressing");
                if ("ScalingDown".equals(progressing.get("reason"))) {
                    sawScalingDown.set(true);
                }
                Object offline = status(c).get("offlinePartitions");
                if (offline instanceof Number n) {
                    mostOffline.accumulateAndGet(n.intValue(), Math::max);
                }
                if (!sawThrottle.get()) {
                    ConfigResource spread = new ConfigResource(ConfigResource.Type.TOPIC, "spread");
                    ConfigEntry e = admin.describeConfigs(List.of(spread)).all().get(10, TimeUnit.SECONDS).get(spread)
                            .get("follower.replication.throttled.replicas");
                    sawThrottle.set(e != null && e.value() != null && !e.value().isEmpty());
                }
                assertThat(pods).hasSize(3).allMatch(SkeinResources::podReady);
                assertThat(condition(c, "Ready")).containsEntry("status", "True")
                        .containsEntry("message", "3/3 brokers ready");
                assertThat(condition(c, "Progressing")).containsEntry("status", "False");
                assertThat(status(c)).containsEntry("underReplicatedPartitions", 0).containsEntry("offlinePartitions", 0);
                assertThat((List<Map<String, Object>>) status(c).get("brokers")).hasSize(3)
                        .allSatisfy(b -> assertThat(b).containsEntry("inAllIsrs", true));
            });
            long scaleDownMs = ms(scaleDown);
            stop.set(true);
            load.join(TimeUnit.SECONDS.toMillis(150));

            assertThat(violation.get()).as("pods removed before their replicas moved").isNull();
            assertThat(sawScalingDown.get()).as("Progressing reason ScalingDown seen").isTrue();
            assertThat(mostOffline.get()).as("offline partitions at a sample").isZero();
            assertThat(failure.get()).as("a failed acks=all send during the scale down").isNull();
            assertThat(partitions(admin)).allSatisfy(e -> {
                assertThat(onBrokers(e.getValue(), Set.of(3, 4))).isFalse();
                assertThat(e.getValue().replicas()).hasSize(e.getKey().equals("spread") ? 3
                        : e.getValue().replicas().size());
            });
            // the throttle is gone: no topic lists throttled replicas, no default rate
            Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names()
                    .get(10, TimeUnit.SECONDS);
            Map<ConfigResource, Config> configs = admin.describeConfigs(topics.stream()
                    .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList()).all().get(10, TimeUnit.SECONDS);
            configs.values().forEach(cfg -> cfg.entries().forEach(e -> assertThat(e.name().endsWith(".throttled.replicas")
                    && e.value() != null && !e.value().isEmpty()).as(e.toString()).isFalse()));
            ConfigResource defaults = new ConfigResource(ConfigResource.Type.BROKER, "");
            Optional<ConfigEntry> rate = admin.describeConfigs(List.of(defaults)).all().get(10, TimeUnit.SECONDS)
                    .get(defaults).entries().stream().filter(e -> e.name().endsWith(".throttled.rate")
                            && e.source() == ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG).findFirst();
            assertThat(rate).as("a default throttle rate left").isEmpty();

            // every acknowledged record is readable
            Set<String> read = KafkaReads.readAll(bootstrap, "spread", 4).keySet();
            assertThat(read).containsAll(acked.keySet());
            String log = operator.logTail(2000);
            assertThat(log.indexOf("scale down: reassigning")).as("reassigned").isPositive();
            assertThat(log.indexOf("StatefulSet replicas 5 → 3")).as("shrunk after reassigning")
                    .isGreaterThan(log.indexOf("scale down: reassigning"));
            System.out.printf("SkeinClusterScaleE2E: 3 brokers Ready in %d ms; 3 → 5 Ready in %d ms; 5 → 3: replicas off "
                            + "brokers 3,4 after %d ms, StatefulSet lowered after %d ms, Ready with 3 after %d ms; "
                            + "throttle seen on the topic: %s; %d acks=all records sent during the scale down, %d acked "
                            + "in all, all %d read back; operator RSS %d KiB%n", readyMs, scaleUpMs, movedMs.get(),
                    shrunkMs.get(), scaleDownMs, sawThrottle.get(), sent.get(), acked.size(), read.size(),
                    operator.residentKib());
        }

        // ---- below the controller voters: refused, nothing changes
        setBrokers(client, 2);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                condition(cluster(client), "Ready")).containsEntry("status", "False")
                .containsEntry("reason", "ControllerVoterRemoval"));
        assertThat(statefulSet(client).getSpec().getReplicas()).isEqualTo(3);
        setBrokers(client, 3);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                condition(cluster(client), "Ready")).containsEntry("status", "True"));
    }

    private static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }
}
