package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import dev.skein.e2e.chart.Helm;
import dev.skein.e2e.chart.RepoFiles;
import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
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
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static dev.skein.e2e.skein.SkeinResources.GROUPS;
import static dev.skein.e2e.skein.SkeinResources.TOPICS;
import static dev.skein.e2e.skein.SkeinResources.condition;
import static dev.skein.e2e.skein.SkeinResources.podReady;
import static dev.skein.e2e.skein.SkeinResources.resource;
import static dev.skein.e2e.skein.SkeinResources.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The whole story a user lives through (issue 6), in one run on the real control plane, with one
 * timeline: {@code helm install} of the chart (the operator in a pod, with the chart's RBAC only);
 * a SkeinCluster of three brokers applied as GitOps would (server-side apply); SkeinTopics and a
 * SkeinConsumerGroup; an idempotent acks=all producer and a consumer group (kafka-clients) through
 * the bootstrap Service, and kcat in a pod; a config change rolled under that load; the node of a
 * broker lost, the broker replaced on another node and caught up under the recovery throttle; 3 → 5
 * → 3 brokers; the cluster deleted with its claims kept ({@code deleteClaim: false}), and a second
 * one deleted with its claim ({@code deleteClaim: true}). Throughout, no send may fail and every
 * acknowledged record must be read back, by offset and by the consumer group.
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinJourneyE2E {
    private static final String OPERATOR_NS = "skein-journey-system";
    private static final String NS = "skein-journey";
    private static final String RELEASE = "journey";
    private static final String CLUSTER = "main";
    private static final String TOPIC = "orders";
    private static final String GROUP = "order-service";
    private static final long THROTTLE = 1_048_576;
    private static final Duration PATIENCE = Duration.ofSeconds(240);
    private static final Timeline TIMELINE = new Timeline();

    private static KubernetesClient client;
    private static ControlPlane plane;
    private static ProcessKubelet kubelet;
    private static Helm helm;
    private static Path helmHome;
    private static Admin admin;
    private static AckedLoad load;
    private static GroupReader reader;

    @RegisterExtension
    static final TestWatcher ON_FAILURE = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            StringBuilder brokers = new StringBuilder();
            for (int i = 0; i < 5 && kubelet != null; i++) {
                String log = kubelet.log(NS, CLUSTER + "-broker-" + i, "broker");
                brokers.append("---- broker ").append(i).append('\n').append(tail(log, 2500)).append('\n');
            }
            System.err.printf("%n==== %s failed; the journey so far:%n%s==== operator pod log:%n%s%n==== broker pods:%n%s",
                    context.getDisplayName(), TIMELINE.printed(), tail(operatorLog(), 8000), brokers);
        }
    };

    @BeforeAll
    static void start(KubernetesClient kube, ControlPlane controlPlane) throws Exception {
        client = kube;
        plane = controlPlane;
        helmHome = Files.createTempDirectory("journey-helm-");
        helm = new Helm(controlPlane, helmHome);
        ImageRegistry images = ImageRegistry.withDefaults()
                .register("skein/operator", List.of(SkeinJars.java(), "-jar",
                        ImageRegistry.staged(SkeinJars.operator()).toString()))
                .register("skein/broker", List.of(SkeinJars.java(), "-jar",
                        ImageRegistry.staged(SkeinJars.broker()).toString()));
        // five nodes: three brokers, a spare for the replacement, and room for 5 brokers once the lost node is back
        kubelet = ProcessKubelet.builder(kube).namePrefix("journey-node-").nodes(5).zones(5).images(images).build()
                .start();
        for (String ns : List.of(OPERATOR_NS, NS)) {
            kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns)
                    .addToLabels("pod-security.kubernetes.io/enforce", "restricted").endMetadata().build())
                    .serverSideApply();
        }
    }

    @AfterAll
    static void stop(KubernetesClient kube) throws Exception {
        try {
            if (reader != null) {
                reader.close();
            }
            if (load != null) {
                load.stop();
            }
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
            }
        } finally {
            SkeinResources.deleteIgnoringFinalizers(kube, NS, TOPICS, GROUPS, CLUSTERS);
            if (helm != null) {
                helm.uninstall(RELEASE, OPERATOR_NS);
            }
            kube.rbac().clusterRoleBindings().withLabel("app.kubernetes.io/instance", RELEASE).delete();
            kube.rbac().clusterRoles().withLabel("app.kubernetes.io/instance", RELEASE).delete();
            kube.pods().inNamespace(NS).withGracePeriod(0).delete();
            kube.pods().inNamespace(OPERATOR_NS).withGracePeriod(0).delete();
            kube.persistentVolumeClaims().inNamespace(NS).delete();
            if (kubelet != null) {
                kubelet.close();
            }
            kube.namespaces().withName(NS).delete();
            kube.namespaces().withName(OPERATOR_NS).delete();
            if (helmHome != null) {
                try (var files = Files.walk(helmHome)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                }
            }
        }
    }

    @Test
    void fromHelmInstallThroughRollNodeLossAndScalingToDeletionNothingAcknowledgedIsLost() throws Exception {
        installTheOperatorWithHelm();
        applyAClusterOfThreeBrokers();
        applyTopicsAndAConsumerGroupAndStartTheLoad();
        kcatInAPodProducesAndConsumesThroughTheBootstrapService();
        aConfigChangeRollsTheBrokersUnderLoad();
        aLostNodesBrokerIsReplacedAndCaughtUpUnderTheThrottle();
        scaleToFiveAndBackToThree();
        everyAcknowledgedRecordIsReadBackByOffsetAndByTheGroup();
        deletingTheClusterKeepsOrDeletesTheClaimsAsTheSpecSays();
        System.out.print(TIMELINE.printed());
    }

    // ---- the phases, in the order a user goes through them

    private void installTheOperatorWithHelm() throws Exception {
        TIMELINE.mark("helm install " + RELEASE + " charts/skein-operator");
        helm.run("install", RELEASE, RepoFiles.chart().toString(), "--namespace", OPERATOR_NS,
                "--set", "image.repository=skein/operator", "--set", "jvmOptions=-Xmx256m",
                "--set", "resyncSeconds=10", "--wait", "--timeout", "3m").ok("install");
        assertThat(podReady(operatorPod())).as("operator pod Ready after helm install --wait").isTrue();
        TIMELINE.mark("operator pod " + operatorPod().getMetadata().getName() + " Ready on "
                + operatorPod().getSpec().getNodeName());
        plane.kubectl("get", "deploy,pods", "-n", OPERATOR_NS);
    }

    private void applyAClusterOfThreeBrokers() {
        apply(clusterManifest(3));
        TIMELINE.mark("SkeinCluster " + CLUSTER + " (3 brokers) applied");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            GenericKubernetesResource c = cluster();
            assertThat(condition(c, "Ready")).containsEntry("status", "True")
                    .containsEntry("message", "3/3 brokers ready");
            assertThat(status(c)).containsKey("activeController").containsEntry("underReplicatedPartitions", 0);
        });
        TIMELINE.mark("SkeinCluster Ready: 3/3 brokers ready, active controller "
                + status(cluster()).get("activeController"));
        plane.kubectl("get", "skeincluster", "-n", NS, "-o", "wide");
        String bootstrap = bootstrap();
        assertThat(bootstrap).isEqualTo(CLUSTER + "-bootstrap." + NS + ".svc:9092");
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        admin = Admin.create(props);
    }

    private void applyTopicsAndAConsumerGroupAndStartTheLoad() {
        apply(resource("SkeinTopic", NS, TOPIC, Map.of("cluster", CLUSTER, "partitions", 3,
                "replicationFactor", 3, "minInSyncReplicas", 2)));
        apply(resource("SkeinTopic", NS, "kcat-orders", Map.of("cluster", CLUSTER, "partitions", 2,
                "replicationFactor", 3, "minInSyncReplicas", 2)));
        apply(resource("SkeinConsumerGroup", NS, GROUP, Map.of("cluster", CLUSTER, "groupId", GROUP)));
        TIMELINE.mark("SkeinTopics " + TOPIC + ", kcat-orders and SkeinConsumerGroup " + GROUP + " applied");
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(condition(topics().withName(TOPIC).get(), "Ready")).containsEntry("status", "True");
            assertThat(condition(topics().withName("kcat-orders").get(), "Ready")).containsEntry("status", "True");
        });
        TIMELINE.mark("SkeinTopics Ready");

        load = new AckedLoad(bootstrap(), TOPIC, 3);
        load.start();
        reader = new GroupReader(bootstrap());
        await().atMost(Duration.ofSeconds(60)).until(() -> load.ackedCount() >= 200 && reader.count() > 0);
        TIMELINE.mark("acks=all producer and consumer group " + GROUP + " running through " + bootstrap());
        await().atMost(PATIENCE).untilAsserted(() -> {
            Map<String, Object> group = status(groups().withName(GROUP).get());
            assertThat(group).containsEntry("members", 1).containsEntry("state", "Stable").containsKey("totalLag");
        });
        TIMELINE.mark("SkeinConsumerGroup status: 1 member, Stable, lag " + status(groups().withName(GROUP).get())
                .get("totalLag"));
        plane.kubectl("get", "skein", "-n", NS);
    }

    private void kcatInAPodProducesAndConsumesThroughTheBootstrapService() {
        String script = String.join("\n",
                "set -e",
                "for i in 1 2 3 4 5; do echo \"kcat-$i:value-$i\"; done"
                        + " | kcat -b " + bootstrap() + " -P -t kcat-orders -K: -X acks=all",
                "kcat -b " + bootstrap() + " -C -t kcat-orders -o beginning -e -q -f 'consumed %k=%s\\n'");
        // the namespace enforces the restricted Pod Security Standard, as for the brokers
        client.pods().inNamespace(NS).resource(new PodBuilder()
                .withNewMetadata().withName("kcat").withNamespace(NS).endMetadata()
                .withNewSpec().withRestartPolicy("Never")
                .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(10001L)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                .addNewContainer().withName("kcat").withImage("skein-e2e/shell").withArgs(script)
                .withNewSecurityContext().withAllowPrivilegeEscalation(false)
                .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext()
                .endContainer().endSpec().build()).create();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(client.pods().inNamespace(NS).withName("kcat").get()
                .getStatus().getPhase()).isIn("Succeeded", "Failed"));
        String log = kubelet.log(NS, "kcat", "kcat");
        assertThat(client.pods().inNamespace(NS).withName("kcat").get().getStatus().getPhase())
                .as("kcat pod; log:%n%s", log).isEqualTo("Succeeded");
        assertThat(log.lines().filter(l -> l.startsWith("consumed ")).sorted().toList()).containsExactly(
                "consumed kcat-1=value-1", "consumed kcat-2=value-2", "consumed kcat-3=value-3",
                "consumed kcat-4=value-4", "consumed kcat-5=value-5");
        client.pods().inNamespace(NS).withName("kcat").withGracePeriod(0).delete();
        TIMELINE.mark("kcat pod produced 5 records (acks=all) and read them back through the bootstrap Service");
    }

    private void aConfigChangeRollsTheBrokersUnderLoad() {
        String oldRevision = statefulSet().getStatus().getUpdateRevision();
        Object controllerBefore = status(cluster()).get("activeController");
        long ackedBefore = load.ackedCount();
        apply(clusterManifestWithRetention(3));
        TIMELINE.mark("config change applied (log.retention.ms): the roll starts");
        AtomicInteger mostNotReady = new AtomicInteger();
        await().atMost(Duration.ofSeconds(400)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            List<Pod> pods = brokerPods();
            mostNotReady.accumulateAndGet((int) (3 - pods.stream().filter(SkeinResources::podReady).count()), Math::max);
            String revision = statefulSet().getStatus().getUpdateRevision();
            assertThat(revision).isNotEqualTo(oldRevision);
            assertThat(pods).hasSize(3).allSatisfy(p -> {
                assertThat(p.getMetadata().getLabels()).containsEntry("controller-revision-hash", revision);
                assertThat(podReady(p)).isTrue();
            });
            GenericKubernetesResource c = cluster();
            assertThat(condition(c, "Progressing")).containsEntry("status", "False").containsEntry("reason", "UpToDate");
            assertThat(condition(c, "Ready")).containsEntry("status", "True");
        });
        List<String> restarts = operatorLog().lines().filter(l -> l.contains("rolling update: restarting broker"))
                .map(l -> l.replaceAll(".*rolling update: restarting broker (\\d+).*", "$1")).toList();
        TIMELINE.mark("rolled: 3 brokers restarted one at a time (order " + restarts + ", active controller "
                + controllerBefore + " last), at most " + mostNotReady.get() + " not ready at a sample; "
                + (load.ackedCount() - ackedBefore) + " records acknowledged during the roll, " + load.failed()
                + " failed sends");
        assertThat(load.failed()).as("failed acks=all sends during the roll (first: %s)", load.firstFailure()).isZero();
        assertThat(mostNotReady.get()).as("brokers not ready at once").isLessThanOrEqualTo(1);
        assertThat(restarts).as("restarts").hasSize(3).doesNotHaveDuplicates();
        assertThat(restarts.getLast()).as("the active controller restarts last").isEqualTo(String.valueOf(controllerBefore));
    }

    private void aLostNodesBrokerIsReplacedAndCaughtUpUnderTheThrottle() {
        int controller = ((Number) status(cluster()).get("activeController")).intValue();
        String operatorNode = operatorPod().getSpec().getNodeName();
        // a broker that is neither the active controller nor next to the operator (whose own loss is
        // Kubernetes' business: its Deployment reschedules it)
        int victim = -1;
        for (int i = 0; i < 3 && victim < 0; i++) {
            if (i != controller && !pod(i).getSpec().getNodeName().equals(operatorNode)) {
                victim = i;
            }
        }
        assertThat(victim).as("a broker neither the controller nor on the operator's node").isNotNegative();
        int lostBroker = victim;
        Pod old = pod(lostBroker);
        String lostNode = old.getSpec().getNodeName();
        PersistentVolumeClaim oldClaim = claim(lostBroker);
        long ackedBefore = load.ackedCount();

        kubelet.loseNode(lostNode);
        TIMELINE.mark("node " + lostNode + " of broker " + lostBroker + " lost (power off)");
        Map<String, Boolean> seen = new ConcurrentHashMap<>();
        await().atMost(Duration.ofSeconds(600)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            if (!nodeReady(client.nodes().withName(lostNode).get()) && seen.putIfAbsent("notReady", true) == null) {
                TIMELINE.mark("node " + lostNode + " NotReady");
            }
            GenericKubernetesResource c = cluster();
            Map<String, Object> degraded = condition(c, "Degraded");
            if ("True".equals(degraded.get("status")) && seen.putIfAbsent("degraded", true) == null) {
                TIMELINE.mark("SkeinCluster Degraded=True " + degraded.get("reason"));
            }
            if (throttleSet() && seen.putIfAbsent("throttle", true) == null) {
                TIMELINE.mark("recovery throttle set (" + THROTTLE + " bytes/s)");
            }
            Pod now = pod(lostBroker);
            boolean replaced = now == null || !now.getMetadata().getUid().equals(old.getMetadata().getUid());
            if (replaced && seen.putIfAbsent("deleted", true) == null) {
                TIMELINE.mark("pod " + old.getMetadata().getName() + " force-deleted with its node-local claim");
            }
            if (replaced && podReady(now) && seen.putIfAbsent("podReady", true) == null) {
                TIMELINE.mark("replacement pod Ready on " + now.getSpec().getNodeName());
            }
            if (seen.containsKey("podReady") && allIsrsFull() && seen.putIfAbsent("isr", true) == null) {
                TIMELINE.mark("every ISR full again");
            }
            assertThat(seen).containsKeys("deleted", "isr");
            assertThat(condition(c, "Ready")).containsEntry("status", "True");
            assertThat(condition(c, "Degraded")).containsEntry("status", "False");
            assertThat(throttleSet()).as("recovery throttle still set").isFalse();
        });
        TIMELINE.mark("SkeinCluster Ready, Degraded=False, throttle removed; " + (load.ackedCount() - ackedBefore)
                + " records acknowledged since the loss, " + load.failed() + " failed sends");
        assertThat(pod(lostBroker).getSpec().getNodeName()).isNotEqualTo(lostNode);
        assertThat(claim(lostBroker).getMetadata().getUid()).as("a fresh claim").isNotEqualTo(oldClaim.getMetadata().getUid());
        assertThat(load.failed()).as("failed acks=all sends (first: %s)", load.firstFailure()).isZero();

        // the node comes back (empty of Skein pods): room for the scale up
        kubelet.restoreNode(lostNode);
        await().atMost(PATIENCE).until(() -> nodeReady(client.nodes().withName(lostNode).get()));
        TIMELINE.mark("node " + lostNode + " back and Ready");
    }

    @SuppressWarnings("unchecked")
    private void scaleToFiveAndBackToThree() throws Exception {
        Set<String> firstPods = new HashSet<>();
        brokerPods().forEach(p -> firstPods.add(p.getMetadata().getUid()));
        apply(clusterManifestWithRetention(5));
        TIMELINE.mark("spec.brokers 3 -> 5 applied");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            GenericKubernetesResource c = cluster();
            assertThat(condition(c, "Ready")).containsEntry("status", "True").containsEntry("message", "5/5 brokers ready");
            assertThat((List<Map<String, Object>>) status(c).get("brokers")).hasSize(5)
                    .allSatisfy(b -> assertThat(b).containsEntry("inAllIsrs", true));
        });
        Set<String> afterUp = new HashSet<>();
        brokerPods().forEach(p -> afterUp.add(p.getMetadata().getUid()));
        assertThat(afterUp).as("the three brokers were not restarted").containsAll(firstPods);
        TIMELINE.mark("SkeinCluster Ready: 5/5 brokers ready (no broker restarted)");

        // a topic made after the scale up is spread over all five: the scale down has replicas to move
        apply(resource("SkeinTopic", NS, "events", Map.of("cluster", CLUSTER, "partitions", 5,
                "replicationFactor", 3, "minInSyncReplicas", 2)));
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(condition(topics().withName("events").get(), "Ready"))
                .containsEntry("status", "True"));
        long onDeparting = replicasOn("events", Set.of(3, 4));
        assertThat(onDeparting).as("replicas of events on brokers 3 and 4").isPositive();
        Set<String> events = new HashSet<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps())) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                sends.add(producer.send(new ProducerRecord<>("events", "k" + i, "event-" + i)));
                events.add("event-" + i);
            }
            for (Future<RecordMetadata> send : sends) {
                send.get(60, TimeUnit.SECONDS);
            }
        }
        TIMELINE.mark("SkeinTopic events (5 partitions, RF 3) Ready with " + onDeparting
                + " replicas on brokers 3 and 4; 1,000 records acknowledged");

        apply(clusterManifestWithRetention(3));
        TIMELINE.mark("spec.brokers 5 -> 3 applied");
        Map<String, Boolean> seen = new ConcurrentHashMap<>();
        AtomicReference<String> violation = new AtomicReference<>();
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
            // the StatefulSet first: a shrink seen here happened before the replicas were read
            int replicas = statefulSet().getSpec().getReplicas();
            long left = replicasOn("events", Set.of(3, 4));
            if (replicas < 5 && left > 0) {
                violation.compareAndSet(null, "StatefulSet at " + replicas + " with " + left + " replicas on 3, 4");
            }
            if (left == 0 && seen.putIfAbsent("moved", true) == null) {
                TIMELINE.mark("every replica off brokers 3 and 4 (reassigned under the throttle)");
            }
            if (replicas == 3 && seen.putIfAbsent("lowered", true) == null) {
                TIMELINE.mark("StatefulSet lowered to 3 replicas");
            }
            GenericKubernetesResource c = cluster();
            assertThat(brokerPods()).hasSize(3).allMatch(SkeinResources::podReady);
            assertThat(statefulSet().getSpec().getReplicas()).isEqualTo(3);
            assertThat(condition(c, "Ready")).containsEntry("status", "True").containsEntry("message", "3/3 brokers ready");
            assertThat(condition(c, "Progressing")).containsEntry("status", "False");
            assertThat(status(c)).containsEntry("underReplicatedPartitions", 0).containsEntry("offlinePartitions", 0);
        });
        assertThat(violation.get()).as("brokers removed before their replicas moved").isNull();
        assertThat(replicasOn("events", Set.of(3, 4))).as("replicas left on brokers 3 and 4").isZero();
        TIMELINE.mark("SkeinCluster Ready: 3/3 brokers ready, no partition under-replicated; " + load.failed() + " failed sends");
        assertThat(load.failed()).as("failed acks=all sends (first: %s)", load.firstFailure()).isZero();
        assertThat(KafkaReads.readAll(bootstrap(), "events", 5).keySet()).as("records of events after the scale down").containsAll(events);
    }

    private void everyAcknowledgedRecordIsReadBackByOffsetAndByTheGroup() throws Exception {
        AckedLoad.Result result = load.checkEveryAckedRecord();
        TIMELINE.mark("producer stopped: " + result.acked() + " records acknowledged, " + load.failed()
                + " failed sends; " + result.found() + " read back at their acknowledged offsets, "
                + result.missing().size() + " missing");
        assertThat(result.missing()).as("acknowledged records lost").isEmpty();
        assertThat(load.failed()).as("failed acks=all sends (first: %s)", load.firstFailure()).isZero();

        Set<String> acked = load.ackedValues();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(reader.missingOf(acked)).as("acked records the group "
                + "has not consumed").isZero());
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(status(groups().withName(GROUP).get()))
                .containsEntry("totalLag", 0).containsEntry("members", 1));
        TIMELINE.mark("consumer group " + GROUP + " consumed every acknowledged record (" + reader.count()
                + " deliveries); SkeinConsumerGroup lag 0");
        reader.close();
        reader = null;
    }

    private void deletingTheClusterKeepsOrDeletesTheClaimsAsTheSpecSays() {
        // users delete the SkeinTopics and the group first: their deletionPolicy (Retain) decides for the topics
        topics().delete();
        groups().delete();
        await().atMost(Duration.ofSeconds(60)).until(() -> topics().list().getItems().isEmpty()
                && groups().list().getItems().isEmpty());
        admin.close(Duration.ofSeconds(5));
        admin = null;
        List<String> claimsBefore = claimNames(CLUSTER);
        clusters().withName(CLUSTER).delete();
        TIMELINE.mark("SkeinCluster " + CLUSTER + " deleted (storage.deleteClaim: false)");
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(cluster()).isNull();
            assertThat(statefulSet()).isNull();
            assertThat(brokerPods()).isEmpty();
            assertThat(client.configMaps().inNamespace(NS).withName(CLUSTER + "-config").get()).isNull();
        });
        assertThat(claimNames(CLUSTER)).as("claims kept").containsExactlyInAnyOrderElementsOf(claimsBefore)
                .contains("data-main-broker-0", "data-main-broker-1", "data-main-broker-2", "data-main-broker-3",
                        "data-main-broker-4");
        TIMELINE.mark("its pods, StatefulSet and ConfigMap are gone; its " + claimsBefore.size()
                + " claims are kept " + claimsBefore);

        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("brokers", 1);
        spec.put("jvmOptions", List.of("-Xmx128m"));
        spec.put("storage", Map.of("size", "1Gi", "deleteClaim", true));
        spec.put("config", Map.of("num.io.threads", "2", "num.network.threads", "2"));
        apply(resource("SkeinCluster", NS, "scratch", spec));
        TIMELINE.mark("SkeinCluster scratch (1 broker, storage.deleteClaim: true) applied");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                condition(clusters().withName("scratch").get(), "Ready")).containsEntry("status", "True"));
        assertThat(claimNames("scratch")).containsExactly("data-scratch-broker-0");
        TIMELINE.mark("SkeinCluster scratch Ready");
        clusters().withName("scratch").delete();
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(clusters().withName("scratch").get()).isNull();
            assertThat(client.pods().inNamespace(NS).withLabel("skein.dev/cluster", "scratch").list().getItems())
                    .isEmpty();
            // gone, not only marked for deletion (a claim stays while a pod uses it)
            assertThat(client.persistentVolumeClaims().inNamespace(NS).withName("data-scratch-broker-0").get())
                    .as("claim of scratch").isNull();
        });
        TIMELINE.mark("SkeinCluster scratch deleted: its pod and its claim are gone");
    }

    // ---- manifests, as a GitOps repository would hold them

    /** The main cluster's manifest with {@code brokers}; the roll's config change stays in it afterwards. */
    private static GenericKubernetesResource clusterManifest(int brokers) {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("min.insync.replicas", "2");
        config.put("num.io.threads", "2");
        config.put("num.network.threads", "2");
        config.put("replica.lag.time.max.ms", "10000");
        config.put("offsets.topic.num.partitions", "3");
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("brokers", brokers);
        spec.put("jvmOptions", List.of("-Xmx200m"));
        spec.put("storage", Map.of("size", "1Gi", "deleteClaim", false));
        spec.put("config", config);
        spec.put("replicationThrottleBytesPerSecond", THROTTLE);
        spec.put("nodeLoss", Map.of("timeoutSeconds", 30, "replaceLocalVolumes", true));
        // one broker per node
        spec.put("template", Map.of("affinity", Map.of("podAntiAffinity", Map.of(
                "requiredDuringSchedulingIgnoredDuringExecution", List.of(Map.of(
                        "topologyKey", "kubernetes.io/hostname",
                        "labelSelector", Map.of("matchLabels", Map.of("skein.dev/cluster", CLUSTER))))))));
        return resource("SkeinCluster", NS, CLUSTER, spec);
    }

    @SuppressWarnings("unchecked")
    private static GenericKubernetesResource clusterManifestWithRetention(int brokers) {
        GenericKubernetesResource manifest = clusterManifest(brokers);
        ((Map<String, Object>) ((Map<String, Object>) manifest.getAdditionalProperties().get("spec")).get("config"))
                .put("log.retention.ms", "86400000");
        return manifest;
    }

    /** Server-side apply, as Argo CD and Flux do, with their own field manager. */
    private static void apply(GenericKubernetesResource manifest) {
        var kind = switch (manifest.getKind()) {
            case "SkeinCluster" -> CLUSTERS;
            case "SkeinTopic" -> TOPICS;
            default -> GROUPS;
        };
        client.genericKubernetesResources(kind).inNamespace(NS).resource(manifest).fieldManager("gitops")
                .forceConflicts().serverSideApply();
    }

    // ---- reading the state

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> clusters() {
        return client.genericKubernetesResources(CLUSTERS).inNamespace(NS);
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> topics() {
        return client.genericKubernetesResources(TOPICS).inNamespace(NS);
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> groups() {
        return client.genericKubernetesResources(GROUPS).inNamespace(NS);
    }

    private static GenericKubernetesResource cluster() {
        return clusters().withName(CLUSTER).get();
    }

    private static String bootstrap() {
        return (String) status(cluster()).get("bootstrapServers");
    }

    private static StatefulSet statefulSet() {
        return client.apps().statefulSets().inNamespace(NS).withName(CLUSTER + "-broker").get();
    }

    private static List<Pod> brokerPods() {
        return client.pods().inNamespace(NS).withLabel("skein.dev/cluster", CLUSTER).list().getItems();
    }

    private static Pod pod(int broker) {
        return client.pods().inNamespace(NS).withName(CLUSTER + "-broker-" + broker).get();
    }

    private static PersistentVolumeClaim claim(int broker) {
        return client.persistentVolumeClaims().inNamespace(NS).withName("data-" + CLUSTER + "-broker-" + broker).get();
    }

    private static List<String> claimNames(String cluster) {
        return client.persistentVolumeClaims().inNamespace(NS).list().getItems().stream()
                .filter(c -> c.getMetadata().getDeletionTimestamp() == null)
                .map(c -> c.getMetadata().getName()).filter(n -> n.startsWith("data-" + cluster + "-broker-"))
                .sorted().toList();
    }

    private static Pod operatorPod() {
        return client.pods().inNamespace(OPERATOR_NS).withLabel("app.kubernetes.io/component", "operator").list()
                .getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).findFirst()
                .orElse(null);
    }

    private static String operatorLog() {
        Pod pod = kubelet == null || client == null ? null : operatorPod();
        return pod == null ? "(no operator pod)" : kubelet.log(OPERATOR_NS, pod.getMetadata().getName(), "operator");
    }

    private static boolean nodeReady(Node node) {
        return node != null && node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static boolean throttleSet() {
        return KafkaReads.replicationThrottleSet(admin, THROTTLE);
    }

    private static boolean allIsrsFull() {
        return KafkaReads.allIsrsFull(admin, TOPIC);
    }

    /** How many replicas of the topic's partitions are on these brokers. */
    private static long replicasOn(String topic, Set<Integer> brokers) throws Exception {
        TopicDescription d = admin.describeTopics(Set.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
        return d.partitions().stream().flatMap(p -> p.replicas().stream()).filter(n -> brokers.contains(n.id())).count();
    }

    private static Properties producerProps() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    private static String tail(String text, int chars) {
        return text.length() > chars ? text.substring(text.length() - chars) : text;
    }

    /** One member of the consumer group, polling on its own thread and remembering what it got. */
    private static final class GroupReader implements AutoCloseable {
        private final Set<String> values = ConcurrentHashMap.newKeySet();
        private final java.util.concurrent.atomic.AtomicLong deliveries = new java.util.concurrent.atomic.AtomicLong();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final Thread thread;

        GroupReader(String bootstrap) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
            // committed offsets are what a restarted member resumes from; none yet: from the start
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            thread = new Thread(() -> {
                try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
                    consumer.subscribe(List.of(TOPIC));
                    while (!stop.get()) {
                        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                            values.add(r.value());
                            deliveries.incrementAndGet();
                        }
                    }
                } catch (Exception e) {
                    failure.set(e);
                }
            }, "journey-group-reader");
            thread.start();
        }

        long count() {
            return deliveries.get();
        }

        long missingOf(Set<String> expected) {
            if (failure.get() != null) {
                throw new AssertionError("the group's consumer failed", failure.get());
            }
            return expected.stream().filter(v -> !values.contains(v)).count();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(TimeUnit.SECONDS.toMillis(60));
        }
    }

    /** What happened when, from the first step, printed as it goes and at the end. */
    private static final class Timeline {
        private final List<String> lines = new ArrayList<>();
        private long start = -1;

        synchronized void mark(String event) {
            long now = System.nanoTime();
            if (start < 0) {
                start = now;
            }
            String line = String.format("  %7.1f s  %s%n", (now - start) / 1e9, event);
            lines.add(line);
            System.out.print("SkeinJourneyE2E" + line);
        }

        synchronized String printed() {
            return "SkeinJourneyE2E timeline:\n" + String.join("", lines);
        }
    }
}
