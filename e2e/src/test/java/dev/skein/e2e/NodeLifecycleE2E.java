package dev.skein.e2e;

import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Nodes of the process kubelet as the real control plane sees them: Ready, spread over zones,
 * schedulable; and a lost node turning unreachable, with its pods evicted but stuck Terminating
 * (no kubelet confirms the deletion), as on a real cluster.
 */
@ExtendWith(ControlPlaneExtension.class)
class NodeLifecycleE2E {

    private static final String NAMESPACE = "node-lifecycle";
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private static ProcessKubelet kubelet;

    @BeforeAll
    static void startKubelet(KubernetesClient client) {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata()
                .build()).serverSideApply();
        kubelet = ProcessKubelet.builder(client).namePrefix("lifecycle-node-").nodes(3)
                .images(ImageRegistry.withDefaults()
                        .register("skein-e2e/http-server", List.of("/usr/bin/python3", "-m", "http.server")))
                .build().start();
        await().atMost(PATIENCE).untilAsserted(() -> {
            for (String node : kubelet.nodeNames()) {
                assertThat(condition(client.nodes().withName(node).get(), "Ready")).isEqualTo("True");
                assertThat(client.nodes().withName(node).get().getSpec().getTaints()).isNullOrEmpty();
            }
        });
    }

    @AfterAll
    static void stopKubelet(KubernetesClient client) {
        if (kubelet != null) {
            kubelet.close();
        }
        client.namespaces().withName(NAMESPACE).delete();
    }

    @AfterEach
    void forceDeletePods(KubernetesClient client) {
        client.pods().inNamespace(NAMESPACE).withGracePeriod(0).delete();
        kubelet.nodeNames().forEach(kubelet::restoreNode);
    }

    private static String condition(Node node, String type) {
        return node.getStatus().getConditions().stream().filter(c -> c.getType().equals(type))
                .map(NodeCondition::getStatus).findFirst().orElse("absent");
    }

    private static Pod pod(String name, String app) {
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).addToLabels("app", app).endMetadata()
                .withNewSpec()
                .addNewContainer().withName("main").withImage("skein-e2e/sleeper").endContainer()
                .withNewAffinity().withNewPodAntiAffinity()
                .addNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withTopologyKey("kubernetes.io/hostname")
                .withNewLabelSelector().addToMatchLabels("app", app).endLabelSelector()
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endPodAntiAffinity().endAffinity()
                .endSpec().build();
    }

    @Test
    void nodesAreReadyInTheirZonesAndRenewTheirLeases(KubernetesClient client) {
        List<Node> nodes = kubelet.nodeNames().stream().map(n -> client.nodes().withName(n).get()).toList();

        assertThat(nodes).extracting(n -> n.getMetadata().getLabels().get("topology.kubernetes.io/zone"))
                .containsExactlyInAnyOrder("zone-a", "zone-b", "zone-c");
        Lease lease = client.resources(Lease.class).inNamespace("kube-node-lease")
                .withName(kubelet.nodeNames().getFirst()).get();
        assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(kubelet.nodeNames().getFirst());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(client.resources(Lease.class)
                .inNamespace("kube-node-lease").withName(kubelet.nodeNames().getFirst()).get()
                .getSpec().getRenewTime()).isAfter(lease.getSpec().getRenewTime()));
    }

    @Test
    void schedulerSpreadsPodsWithAntiAffinityOverThreeNodes(KubernetesClient client) {
        for (int i = 0; i < 3; i++) {
            client.pods().resource(pod("spread-" + i, "spread")).create();
        }

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(client.pods().inNamespace(NAMESPACE)
                .withLabel("app", "spread").list().getItems())
                .extracting(p -> p.getSpec().getNodeName())
                .doesNotContainNull()
                .containsExactlyInAnyOrderElementsOf(kubelet.nodeNames()));
    }

    @Test
    void lostNodeTurnsUnreachableAndItsPodStaysTerminating(KubernetesClient client) {
        client.pods().resource(pod("victim", "victim")).create();
        String node = await().atMost(PATIENCE).until(
                () -> client.pods().inNamespace(NAMESPACE).withName("victim").get().getSpec().getNodeName(),
                Objects::nonNull);

        kubelet.loseNode(node);

        await().atMost(PATIENCE).untilAsserted(() -> {
            Node lost = client.nodes().withName(node).get();
            assertThat(condition(lost, "Ready")).isEqualTo("Unknown");
            assertThat(lost.getSpec().getTaints()).anySatisfy(t -> {
                assertThat(t.getKey()).isEqualTo("node.kubernetes.io/unreachable");
                assertThat(t.getEffect()).isEqualTo("NoExecute");
            });
        });
        // The pod tolerates unreachable for 10 s (kube-apiserver flag in e2e/cluster), then is evicted;
        // with no kubelet to confirm, it stays Terminating until someone force-deletes it.
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(
                client.pods().inNamespace(NAMESPACE).withName("victim").get().getMetadata().getDeletionTimestamp())
                .isNotNull());
        await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                client.pods().inNamespace(NAMESPACE).withName("victim").get()).isNotNull());

        kubelet.restoreNode(node);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(condition(client.nodes().withName(node).get(),
                "Ready")).isEqualTo("True"));
    }

    @Test
    void partitionedNodeStaysReadyButItsPodsAreCutOffUntilHealed(KubernetesClient client) {
        client.pods().resource(new PodBuilder()
                .withNewMetadata().withName("server").withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("skein-e2e/http-server").withArgs("8080")
                .withNewReadinessProbe().withNewTcpSocket().withNewPort(8080).endTcpSocket().withPeriodSeconds(1)
                .endReadinessProbe().endContainer().endSpec().build()).create();
        Pod server = await().atMost(PATIENCE).until(() -> client.pods().inNamespace(NAMESPACE).withName("server").get(),
                p -> p.getStatus() != null && p.getStatus().getConditions() != null && p.getStatus().getConditions()
                        .stream().anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")));
        String ip = server.getStatus().getPodIP();
        String node = server.getSpec().getNodeName();
        assertThat(reachable(ip, 8080)).isTrue();

        kubelet.partitionNode(node);

        assertThat(reachable(ip, 8080)).isFalse();
        await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                assertThat(condition(client.nodes().withName(node).get(), "Ready")).isEqualTo("True"));

        kubelet.healNode(node);

        await().atMost(Duration.ofSeconds(10)).until(() -> reachable(ip, 8080));
    }

    private static boolean reachable(String ip, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(ip, port), 1000);
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
