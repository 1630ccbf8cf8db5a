package dev.skein.e2e.chart;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import dev.skein.e2e.skein.SkeinResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a user does first: {@code helm install} the chart (real helm), with the operator image run by
 * the process kubelet ({@code skein/operator} = {@code java -jar operator/target/skein-operator.jar},
 * as operator-image/Dockerfile runs it). The operator runs in a pod with the chart's ServiceAccount
 * and RBAC only (in-cluster config: service-account token, KUBERNETES_SERVICE_HOST), turns Ready on
 * /healthz, takes the leader Lease, and reconciles a one-broker SkeinCluster (broker pod on the
 * kubelet) to Ready and a SkeinTopic on it, which takes a record; its log shows no 403. Both
 * namespaces enforce the restricted Pod Security Standard.
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinOperatorHelmInstallE2E {
    private static final String OPERATOR_NS = "skein-system";
    private static final String APPS_NS = "skein-helm-apps";
    private static final String RELEASE = "skein";
    private static final Duration PATIENCE = Duration.ofSeconds(180);
    private static final ResourceDefinitionContext CLUSTERS = SkeinResources.CLUSTERS;
    private static final ResourceDefinitionContext TOPICS = SkeinResources.TOPICS;

    private static ProcessKubelet kubelet;
    private static Helm helm;
    private static Path helmHome;
    private static boolean installed;

    @RegisterExtension
    static final TestWatcher LOGS_ON_FAILURE = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            System.err.printf("%n==== %s failed; operator pod log:%n%s%n==== broker pod log:%n%s%n",
                    context.getDisplayName(), tail(operatorLog(), 6000),
                    kubelet == null ? "" : tail(kubelet.log(APPS_NS, "demo-broker-0", "broker"), 3000));
        }
    };

    private static String tail(String text, int chars) {
        return text.length() > chars ? text.substring(text.length() - chars) : text;
    }

    private static Path jar(String module, String name) {
        Path jar = RepoFiles.root().resolve(module + "/target/" + name);
        assertThat(jar).as("build it with ./mvnw -pl broker,operator package -DskipTests (e2e/run does)").isRegularFile();
        return jar;
    }

    private static KubernetesClient client;
    private static ControlPlane plane;

    private static String kubectl(String... args) {
        return plane.kubectl(args);
    }

    @BeforeAll
    static void start(KubernetesClient kube, ControlPlane controlPlane) throws Exception {
        client = kube;
        plane = controlPlane;
        helmHome = Files.createTempDirectory("chart-helm-install-");
        helm = new Helm(controlPlane, helmHome);
        String java = ProcessHandle.current().info().command().orElse("java");
        ImageRegistry images = ImageRegistry.withDefaults()
                .register("skein/operator", List.of(java, "-jar", ImageRegistry.staged(jar("operator", "skein-operator.jar")).toString()))
                .register("skein/broker", List.of(java, "-jar", ImageRegistry.staged(jar("broker", "skein-broker.jar")).toString()));
        kubelet = ProcessKubelet.builder(kube).namePrefix("helm-node-").nodes(2).zones(2).images(images).build().start();
        // Both namespaces enforce the "restricted" Pod Security Standard: the API server admits the
        // operator's and the brokers' pods only if their security contexts are what the chart and
        // the operator claim (non-root, no escalation, no capabilities, seccomp RuntimeDefault).
        for (String ns : List.of(OPERATOR_NS, APPS_NS)) {
            kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns)
                    .addToLabels("pod-security.kubernetes.io/enforce", "restricted").endMetadata().build())
                    .serverSideApply();
        }
    }

    @AfterAll
    static void stop(KubernetesClient kube) throws Exception {
        try {
            var topics = kube.genericKubernetesResources(TOPICS).inNamespace(APPS_NS);
            if (installed && !topics.list().getItems().isEmpty()) {
                topics.delete(); // the operator removes its finalizer (deletionPolicy Retain)
                await().atMost(Duration.ofSeconds(60)).until(() -> topics.list().getItems().isEmpty());
            }
        } finally {
            SkeinResources.deleteIgnoringFinalizers(kube, APPS_NS, TOPICS, CLUSTERS);
            if (helm != null) {
                helm.uninstall(RELEASE, OPERATOR_NS);
            }
            // cluster-scoped objects of a release that failed half-way
            kube.rbac().clusterRoleBindings().withName("skein-skein-operator").delete();
            kube.rbac().clusterRoles().withName("skein-skein-operator").delete();
            kube.pods().inNamespace(APPS_NS).withGracePeriod(0).delete();
            kube.pods().inNamespace(OPERATOR_NS).withGracePeriod(0).delete();
            if (kubelet != null) {
                kubelet.close();
            }
            kube.namespaces().withName(APPS_NS).delete();
            kube.namespaces().withName(OPERATOR_NS).delete();
            if (helmHome != null) {
                try (var files = Files.walk(helmHome)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                }
            }
        }
    }

    private static Pod operatorPod() {
        return client.pods().inNamespace(OPERATOR_NS).withLabel("app.kubernetes.io/component", "operator").list()
                .getItems().stream().findFirst().orElse(null);
    }

    private static String operatorLog() {
        Pod pod = kubelet == null || client == null ? null : operatorPod();
        return pod == null ? "(no operator pod)" : kubelet.log(OPERATOR_NS, pod.getMetadata().getName(), "operator");
    }

    /** Resource versions of the resources and the cluster's owned objects, and the broker pod's UID. */
    private static List<String> versions(GenericKubernetesResource cluster, GenericKubernetesResource topic) {
        return List.of(cluster.getMetadata().getResourceVersion(), topic.getMetadata().getResourceVersion(),
                client.apps().statefulSets().inNamespace(APPS_NS).withName("demo-broker").get().getMetadata()
                        .getResourceVersion(),
                client.configMaps().inNamespace(APPS_NS).withName("demo-config").get().getMetadata()
                        .getResourceVersion(),
                client.pods().inNamespace(APPS_NS).withName("demo-broker-0").get().getMetadata().getUid());
    }

    @Test
    void helmInstalledOperatorRunsInClusterWithTheChartsRbacAndReconcilesAClusterAndATopic() throws Exception {
        // the namespaces' restricted policy is enforced: a pod with no security context is refused
        Pod plain = new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName("plain")
                .withNamespace(APPS_NS).endMetadata().withNewSpec().addNewContainer().withName("c")
                .withImage("skein-e2e/sleeper").endContainer().endSpec().build();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> client.resource(plain).create())
                .hasMessageContaining("violates PodSecurity \"restricted:latest\"");

        long start = System.nanoTime();
        helm.run("install", RELEASE, RepoFiles.chart().toString(), "--namespace", OPERATOR_NS,
                "--set", "image.repository=skein/operator", "--set", "jvmOptions=-Xmx256m",
                "--set", "resyncSeconds=10", "--wait", "--timeout", "3m").ok("install");
        installed = true;
        long installedMs = (System.nanoTime() - start) / 1_000_000;

        Pod pod = operatorPod();
        assertThat(SkeinResources.podReady(pod)).as("operator pod Ready after helm install --wait").isTrue();
        String podName = pod.getMetadata().getName();
        kubectl("get", "deploy,pods,lease", "-n", OPERATOR_NS);
        assertThat(pod.getSpec().getServiceAccountName()).isEqualTo("skein-skein-operator");
        System.out.printf("helm install --wait -> operator pod %s Ready: %d ms%n", podName, installedMs);

        // the leader Lease, held by this pod (identity: pod name and pid)
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Lease lease = client.leases().inNamespace(OPERATOR_NS).withName("skein-operator").get();
            assertThat(lease).isNotNull();
            assertThat(lease.getSpec().getHolderIdentity()).startsWith(podName + "-");
        });
        long leaderMs = (System.nanoTime() - start) / 1_000_000;

        // the operator's /metrics on the pod IP, as the metrics Service's endpoints serve it
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI metrics = URI.create("http://" + pod.getStatus().getPodIP() + ":8080/metrics");
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertThat(
                http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString()).body())
                .contains("jvm_memory_used_bytes"));

        var clusters = client.genericKubernetesResources(CLUSTERS).inNamespace(APPS_NS);
        long clusterApplied = System.nanoTime();
        GenericKubernetesResource clusterManifest = SkeinResources.resource("SkeinCluster", APPS_NS, "demo", Map.of("brokers", 1,
                "jvmOptions", List.of("-Xmx256m"), "storage", Map.of("size", "1Gi"),
                "config", Map.of("num.io.threads", "2", "num.network.threads", "2")));
        clusters.resource(clusterManifest).fieldManager("gitops").serverSideApply();
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(
                SkeinResources.condition(clusters.withName("demo").get(), "Ready"))
                .containsEntry("status", "True").containsEntry("message", "1/1 brokers ready"));
        long clusterReadyMs = (System.nanoTime() - clusterApplied) / 1_000_000;
        kubectl("get", "skeincluster", "-n", APPS_NS, "-o", "wide");
        kubectl("get", "pods,svc,sts,pdb,cm", "-n", APPS_NS, "-l", "skein.dev/cluster=demo");
        @SuppressWarnings("unchecked")
        String bootstrap = (String) ((Map<String, Object>) clusters.withName("demo").get().getAdditionalProperties()
                .get("status")).get("bootstrapServers");
        assertThat(bootstrap).isEqualTo("demo-bootstrap." + APPS_NS + ".svc:9092");

        var topics = client.genericKubernetesResources(TOPICS).inNamespace(APPS_NS);
        long topicApplied = System.nanoTime();
        GenericKubernetesResource topicManifest = SkeinResources.resource("SkeinTopic", APPS_NS, "greetings", Map.of("cluster", "demo",
                "partitions", 3, "replicationFactor", 1));
        topics.resource(topicManifest).fieldManager("gitops").serverSideApply();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(SkeinResources.condition(topics.withName("greetings").get(), "Ready"))
                .containsEntry("status", "True"));
        long topicReadyMs = (System.nanoTime() - topicApplied) / 1_000_000;
        assertThat(kubectl("get", "skein", "-n", APPS_NS)).contains("greetings").contains("demo");

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            RecordMetadata sent = producer.send(new ProducerRecord<>("greetings", "k", "hello from helm"))
                    .get(60, TimeUnit.SECONDS);
            assertThat(sent.offset()).isZero();
        }

        // converged: the operator has read the cluster's replication state through the bootstrap Service
        await().atMost(PATIENCE).untilAsserted(() -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> status = (Map<String, Object>) clusters.withName("demo").get()
                    .getAdditionalProperties().get("status");
            assertThat(status).containsEntry("underReplicatedPartitions", 0).containsEntry("offlinePartitions", 0)
                    .containsKey("activeController");
        });
        kubectl("get", "skeincluster", "-n", APPS_NS, "-o", "wide");

        // GitOps: applying the same manifests again changes nothing, and idle reconciles write nothing
        List<String> before = versions(clusters.withName("demo").get(), topics.withName("greetings").get());
        clusters.resource(clusterManifest).fieldManager("gitops").serverSideApply();
        topics.resource(topicManifest).fieldManager("gitops").serverSideApply();
        await().during(Duration.ofSeconds(25)).atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofSeconds(1))
                .until(() -> versions(clusters.withName("demo").get(), topics.withName("greetings").get())
                        .equals(before));

        String log = operatorLog();
        assertThat(log).contains("Skein operator started against https://")
                .doesNotContain("Forbidden").doesNotContain(" 403 ").doesNotContain("403 Forbidden");
        System.out.printf("timeline: helm install -> operator Ready %d ms, -> leader %d ms; SkeinCluster applied -> "
                + "Ready %d ms; SkeinTopic applied -> Ready %d ms%n", installedMs, leaderMs, clusterReadyMs, topicReadyMs);
    }
}
