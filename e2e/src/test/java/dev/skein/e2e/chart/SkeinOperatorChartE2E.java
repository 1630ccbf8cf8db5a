package dev.skein.e2e.chart;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The chart as helm and the API server see it: {@code helm lint}, {@code helm template} with the
 * default values and with a set of non-default ones (the rendered security context, RBAC rules,
 * arguments and monitoring objects), invalid values refused with the schema's message, and every
 * rendered object (and every manifest of {@code examples/}) accepted by a server-side dry-run apply
 * on the real kube-apiserver.
 */
@ExtendWith(ControlPlaneExtension.class)
class SkeinOperatorChartE2E {
    private static final String NAMESPACE = "skein-chart-e2e";
    private static final List<String> WATCHED = List.of("skein-chart-e2e-a", "skein-chart-e2e-b");
    /** The monitoring.coreos.com kinds the chart may render; stand-in CRDs let the dry run reach them. */
    private static final List<String[]> MONITORING_KINDS = List.of(new String[]{"ServiceMonitor", "servicemonitors"},
            new String[]{"PodMonitor", "podmonitors"}, new String[]{"PrometheusRule", "prometheusrules"});

    /** The ClusterRole's rules, exactly: what the reconcilers touch (see the comment in rbac.yaml). */
    private static final List<String> CLUSTER_RULES = List.of(
            "skein.dev [skeinclusters, skeintopics, skeinconsumergroups] [get, list, watch, patch, update]",
            "skein.dev [skeinclusters/status, skeintopics/status, skeinconsumergroups/status] [get, patch, update]",
            "skein.dev [skeinclusters/finalizers, skeintopics/finalizers, skeinconsumergroups/finalizers] [update]",
            " [configmaps, services, serviceaccounts] [get, list, watch, create, patch, update, delete]",
            "apps [statefulsets] [get, list, watch, create, patch, update, delete]",
            "policy [poddisruptionbudgets] [get, list, watch, create, patch, update, delete]",
            " [pods] [get, list, watch, delete]",
            " [persistentvolumeclaims] [list, delete]",
            " [events] [create]");
    /** The cluster-scoped reads, bound cluster-wide in every mode: nodes, volumes, storage classes. */
    private static final List<String> CLUSTER_SCOPED_RULES = List.of(
            " [nodes] [get, list]",
            " [persistentvolumes] [get]",
            "storage.k8s.io [storageclasses] [get]");

    private static Helm helm;

    @BeforeAll
    static void namespacesAndCrds(KubernetesClient client, ControlPlane controlPlane, @TempDir Path home)
            throws Exception {
        helm = new Helm(controlPlane, home);
        for (String ns : Stream.concat(Stream.of(NAMESPACE), WATCHED.stream()).toList()) {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .serverSideApply();
        }
        // The chart's own CRDs (what helm install puts in), so that examples/ can be dry-run applied.
        List<HasMetadata> crds = new ArrayList<>();
        try (Stream<Path> files = Files.list(RepoFiles.chart().resolve("crds"))) {
            for (Path file : files.sorted().toList()) {
                crds.addAll(client.load(Files.newInputStream(file)).items());
            }
        }
        for (String[] kind : MONITORING_KINDS) {
            crds.add(standInCrd(kind[0], kind[1]));
        }
        for (HasMetadata crd : crds) {
            client.resource(crd).forceConflicts().serverSideApply();
        }
        for (HasMetadata crd : crds) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(client.apiextensions().v1()
                    .customResourceDefinitions().withName(crd.getMetadata().getName()).get().getStatus().getConditions())
                    .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Established=True")));
        }
    }

    @AfterAll
    static void cleanUp(KubernetesClient client) {
        for (String[] kind : MONITORING_KINDS) {
            client.apiextensions().v1().customResourceDefinitions().withName(kind[1] + ".monitoring.coreos.com").delete();
        }
        Stream.concat(Stream.of(NAMESPACE), WATCHED.stream()).forEach(ns -> client.namespaces().withName(ns).delete());
    }

    /**
     * A CRD for a Prometheus Operator kind that accepts any spec: the dry run then checks the
     * object's apiVersion, kind and metadata (the real CRDs are not available offline).
     */
    private static CustomResourceDefinition standInCrd(String kind, String plural) {
        return new CustomResourceDefinitionBuilder().withNewMetadata().withName(plural + ".monitoring.coreos.com")
                .endMetadata().withNewSpec().withGroup("monitoring.coreos.com").withScope("Namespaced")
                .withNewNames().withKind(kind).withPlural(plural).endNames()
                .addNewVersion().withName("v1").withServed(true).withStorage(true).withNewSchema()
                .withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
                .endOpenAPIV3Schema().endSchema().endVersion().endSpec().build();
    }

    /** Non-default values a production install might use: two replicas, two watched namespaces, all monitoring. */
    private static Path productionValues(Path dir) throws Exception {
        return Files.writeString(dir.resolve("values-prod.yaml"), """
                replicaCount: 2
                image:
                  repository: registry.example.com/skein/operator
                  tag: "0.2.0"
                  pullPolicy: Always
                imagePullSecrets: [{name: regcred}]
                watchNamespaces: [%s, %s]
                resyncSeconds: 300
                logLevel: debug
                resources:
                  requests: {cpu: 200m, memory: 384Mi}
                  limits: {memory: 768Mi}
                nodeSelector: {kubernetes.io/os: linux}
                tolerations: [{key: dedicated, operator: Equal, value: platform, effect: NoSchedule}]
                affinity:
                  podAntiAffinity:
                    preferredDuringSchedulingIgnoredDuringExecution:
                      - weight: 100
                        podAffinityTerm:
                          topologyKey: kubernetes.io/hostname
                          labelSelector: {matchLabels: {app.kubernetes.io/name: skein-operator}}
                priorityClassName: system-cluster-critical
                metrics:
                  serviceMonitor: {enabled: true, labels: {release: prometheus}}
                  brokerPodMonitor: {enabled: true}
                  prometheusRule: {enabled: true, consumerLagThreshold: 5000, for: 10m, clusterStatusAlerts: true}
                kubeStateMetrics: {customResourceState: true}
                grafanaDashboard: {enabled: true}
                """.formatted(WATCHED.get(0), WATCHED.get(1)));
    }

    private static List<HasMetadata> parse(KubernetesClient client, String yaml) {
        return client.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
    }

    private static <T extends HasMetadata> List<T> ofKind(List<HasMetadata> objects, Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static List<String> kinds(List<HasMetadata> objects) {
        return objects.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()
                + (o.getMetadata().getNamespace() == null ? "" : "@" + o.getMetadata().getNamespace())).toList();
    }

    private static List<String> rules(List<PolicyRule> rules) {
        return rules.stream().map(r -> String.join(",", r.getApiGroups()) + " " + r.getResources() + " "
                + r.getVerbs() + (r.getResourceNames() == null || r.getResourceNames().isEmpty() ? ""
                : " names " + r.getResourceNames())).toList();
    }

    @Test
    void lintPassesWithDefaultAndProductionValues(@TempDir Path dir) throws Exception {
        String chart = RepoFiles.chart().toString();
        assertThat(helm.run("lint", "--strict", chart).ok("lint").output()).contains("1 chart(s) linted, 0 chart(s) failed");
        assertThat(helm.run("lint", "--strict", chart, "-f", productionValues(dir).toString()).ok("lint prod").output())
                .contains("0 chart(s) failed");
    }

    @Test
    void defaultValuesRenderANonRootReadOnlyOperatorWithLeaderElectionAndLeastPrivilege(KubernetesClient client)
            throws Exception {
        List<HasMetadata> objects = parse(client, helm.template("skein", NAMESPACE));

        assertThat(kinds(objects)).containsExactlyInAnyOrder(
                "ServiceAccount/skein-skein-operator@" + NAMESPACE,
                "ClusterRole/skein-skein-operator", "ClusterRoleBinding/skein-skein-operator",
                "ClusterRole/skein-skein-operator-cluster", "ClusterRoleBinding/skein-skein-operator-cluster",
                "Role/skein-skein-operator-leader-election@" + NAMESPACE,
                "RoleBinding/skein-skein-operator-leader-election@" + NAMESPACE,
                "Service/skein-skein-operator-metrics@" + NAMESPACE,
                "Deployment/skein-skein-operator@" + NAMESPACE);

        Deployment deployment = ofKind(objects, Deployment.class).getFirst();
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(1);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        assertThat(pod.getServiceAccountName()).isEqualTo("skein-skein-operator");
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(10001L);
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        Container operator = pod.getContainers().getFirst();
        assertThat(operator.getImage()).isEqualTo("ghcr.io/skein-dev/skein-operator:0.1.0");
        assertThat(operator.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(operator.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(operator.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(operator.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
        assertThat(operator.getArgs()).containsExactly("--http-port", "8080", "--resync-seconds", "120",
                "--leader-election-namespace", NAMESPACE);
        assertThat(operator.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(operator.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(operator.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("http-metrics");
        assertThat(operator.getPorts()).singleElement().satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(8080));
        assertThat(operator.getResources().getLimits()).containsKey("memory");

        ClusterRole clusterRole = ofKind(objects, ClusterRole.class).stream()
                .filter(r -> r.getMetadata().getName().equals("skein-skein-operator")).findFirst().orElseThrow();
        assertThat(rules(clusterRole.getRules())).containsExactlyElementsOf(
                CLUSTER_RULES);
        ClusterRole clusterScoped = ofKind(objects, ClusterRole.class).stream()
                .filter(r -> r.getMetadata().getName().equals("skein-skein-operator-cluster")).findFirst().orElseThrow();
        assertThat(rules(clusterScoped.getRules())).containsExactlyElementsOf(CLUSTER_SCOPED_RULES);
        for (ClusterRole role : ofKind(objects, ClusterRole.class)) {
            assertThat(rules(role.getRules())).noneMatch(r -> r.contains("*") || r.contains("secrets"));
        }
        Role lease = ofKind(objects, Role.class).getFirst();
        assertThat(rules(lease.getRules())).containsExactly("coordination.k8s.io [leases] [create]",
                "coordination.k8s.io [leases] [get, update, patch] names [skein-operator]");
    }

    @Test
    void productionValuesRenderNamespacedRbacTwoReplicasAndMonitoring(KubernetesClient client, @TempDir Path dir)
            throws Exception {
        List<HasMetadata> objects = parse(client, helm.template("skein", NAMESPACE, "-f",
                productionValues(dir).toString()));

        assertThat(kinds(objects)).doesNotContain("ClusterRoleBinding/skein-skein-operator").contains(
                "ClusterRoleBinding/skein-skein-operator-cluster",
                "RoleBinding/skein-skein-operator@" + WATCHED.get(0), "RoleBinding/skein-skein-operator@" + WATCHED.get(1),
                "ServiceMonitor/skein-skein-operator@" + NAMESPACE, "PodMonitor/skein-skein-operator-brokers@" + NAMESPACE,
                "PrometheusRule/skein-skein-operator@" + NAMESPACE, "ConfigMap/skein-skein-operator-dashboard@" + NAMESPACE);
        assertThat(ofKind(objects, RoleBinding.class)).filteredOn(b -> WATCHED.contains(b.getMetadata().getNamespace()))
                .allSatisfy(b -> assertThat(b.getRoleRef().getKind() + "/" + b.getRoleRef().getName())
                        .isEqualTo("ClusterRole/skein-skein-operator"));

        Deployment deployment = ofKind(objects, Deployment.class).getFirst();
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        Container operator = pod.getContainers().getFirst();
        assertThat(operator.getImage()).isEqualTo("registry.example.com/skein/operator:0.2.0");
        assertThat(operator.getImagePullPolicy()).isEqualTo("Always");
        assertThat(operator.getArgs()).containsExactly("--http-port", "8080", "--resync-seconds", "300",
                "--leader-election-namespace", NAMESPACE, "--namespace", WATCHED.get(0), "--namespace", WATCHED.get(1));
        assertThat(operator.getEnv()).anySatisfy(e -> assertThat(e.getValue())
                .contains("-Dorg.slf4j.simpleLogger.log.dev.skein=debug"));
        assertThat(operator.getResources().getRequests().get("memory").toString()).isEqualTo("384Mi");
        assertThat(pod.getNodeSelector()).containsEntry("kubernetes.io/os", "linux");
        assertThat(pod.getTolerations()).singleElement().satisfies(t -> assertThat(t.getKey()).isEqualTo("dedicated"));
        assertThat(pod.getAffinity().getPodAntiAffinity()).isNotNull();
        assertThat(pod.getPriorityClassName()).isEqualTo("system-cluster-critical");
        assertThat(pod.getImagePullSecrets()).singleElement().satisfies(s -> assertThat(s.getName()).isEqualTo("regcred"));

        GenericKubernetesResource rule = ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("PrometheusRule")).findFirst().orElseThrow();
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> alerts = ((List<Map<String, Object>>) ((Map<String, Object>) rule
                .getAdditionalProperties().get("spec")).get("groups")).stream()
                .flatMap(g -> ((List<Map<String, Object>>) g.get("rules")).stream()).toList();
        assertThat(alerts).extracting(a -> a.get("alert")).containsExactlyInAnyOrder("SkeinUnderReplicatedPartitions",
                "SkeinBrokerMetricsMissing", "SkeinOfflinePartitions", "SkeinClusterUnderReplicated",
                "SkeinClusterNotReady", "SkeinOperatorReconcileErrors", "SkeinOperatorDown",
                "SkeinConsumerGroupLagHigh");
        assertThat(alerts).filteredOn(a -> !"SkeinOfflinePartitions".equals(a.get("alert")))
                .allSatisfy(a -> assertThat(a).containsEntry("for", "10m"));
        assertThat(alerts).extracting(a -> (String) a.get("expr")).anySatisfy(e -> assertThat(e)
                        .contains("kafka_server_replicamanager_under_replicated_partitions"))
                .anySatisfy(e -> assertThat(e).contains("skein_operator_reconcile_errors_total"))
                .anySatisfy(e -> assertThat(e).endsWith("(skein_consumer_group_total_lag) > 5000"))
                .anySatisfy(e -> assertThat(e).contains("skein_cluster_offline_partitions"));
        // the kube-state-metrics config exports exactly the metrics those alerts read
        ConfigMap ksm = ofKind(objects, ConfigMap.class).stream()
                .filter(c -> c.getMetadata().getName().endsWith("-kube-state-metrics")).findFirst().orElseThrow();
        assertThat(ksm.getData().get("skein-custom-resource-state.yaml")).contains("kind: CustomResourceStateMetrics",
                "metricNamePrefix: skein_cluster", "name: offline_partitions", "path: [status, offlinePartitions]",
                "name: under_replicated_partitions", "name: condition");
        GenericKubernetesResource monitor = ofKind(objects, GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals("ServiceMonitor")).findFirst().orElseThrow();
        assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");

        ConfigMap dashboard = ofKind(objects, ConfigMap.class).stream()
                .filter(c -> c.getMetadata().getName().endsWith("-dashboard")).findFirst().orElseThrow();
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        @SuppressWarnings("unchecked")
        Map<String, Object> json = client.getKubernetesSerialization().unmarshal(dashboard.getData().get("skein.json"),
                Map.class);
        assertThat(json).containsEntry("uid", "skein-overview");
        assertThat((List<?>) json.get("panels")).hasSizeGreaterThanOrEqualTo(6);
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "replicaCount          | -1        | at '/replicaCount': minimum: got -1, want 0",
            "image.tag             | 5         | at '/image/tag': got number, want string",
            "image.pullPolicy      | Sometimes | at '/image/pullPolicy': value must be one of 'IfNotPresent', 'Always', 'Never'",
            "replicas              | 2         | additional properties 'replicas' not allowed",
            "watchNamespaces[0]    | Team_A    | at '/watchNamespaces/0': 'Team_A' does not match pattern",
            "metrics.port          | 70000     | at '/metrics/port': maximum: got 70,000, want 65,535",
            "logLevel              | verbose   | at '/logLevel': value must be one of"})
    void invalidValuesFailWithTheSchemasMessage(String key, String value, String message) throws Exception {
        for (String command : List.of("template", "install")) {
            List<String> args = new ArrayList<>(List.of(command, "bad", RepoFiles.chart().toString(),
                    "--namespace", NAMESPACE, "--set", key + "=" + value));
            if (command.equals("install")) {
                args.add("--dry-run=server");
            }
            Helm.Result result = helm.run(args);
            assertThat(result.exitCode()).as("helm %s with %s=%s: %s", command, key, value, result.output()).isNotZero();
            assertThat(result.output()).contains("values don't meet the specifications of the schema")
                    .contains(message);
        }
    }

    @Test
    void everyRenderedObjectAndExampleIsAcceptedByTheApiServer(KubernetesClient client, @TempDir Path dir)
            throws Exception {
        List<HasMetadata> objects = new ArrayList<>(parse(client, helm.template("skein", NAMESPACE)));
        objects.addAll(parse(client, helm.template("prod", NAMESPACE, "-f", productionValues(dir).toString())));
        try (Stream<Path> examples = Files.list(RepoFiles.root().resolve("examples"))) {
            for (Path example : examples.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                for (HasMetadata o : client.load(Files.newInputStream(example)).items()) {
                    o.getMetadata().setNamespace(NAMESPACE);
                    objects.add(o);
                }
            }
        }
        assertThat(kinds(objects)).contains("SkeinCluster/my-cluster@" + NAMESPACE, "SkeinTopic/orders@" + NAMESPACE,
                "SkeinConsumerGroup/order-service@" + NAMESPACE, "PrometheusRule/prod-skein-operator@" + NAMESPACE);

        for (HasMetadata object : objects) {
            HasMetadata applied = client.resource(object).dryRun().serverSideApply();
            assertThat(applied.getMetadata().getUid()).as("dry-run apply of %s", kinds(List.of(object))).isNotBlank();
        }
        // a dry run persists nothing
        assertThat(client.apps().deployments().inNamespace(NAMESPACE).list().getItems()).isEmpty();
        assertThat(client.rbac().clusterRoles().withName("skein-skein-operator").get()).isNull();
    }
}
