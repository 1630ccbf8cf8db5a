package dev.skein.e2e;

import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A StatefulSet as the operator will run brokers: three replicas with a volumeClaimTemplate, a
 * headless Service and a readiness probe, one pod per node. Proves the pods' identity (own IP, own
 * bound volume, DNS names that other pods resolve and reach over TCP), and what happens on node
 * loss: the pod stays Terminating until it and its claim are force-deleted, then the StatefulSet
 * recreates it on another node with a fresh volume.
 */
@ExtendWith(ControlPlaneExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StatefulSetE2E {

    private static final String NAMESPACE = "statefulset";
    private static final String NAME = "peer";
    private static final String SERVICE = "peers";
    private static final int REPLICAS = 3;
    private static final Duration PATIENCE = Duration.ofSeconds(90);

    private static ProcessKubelet kubelet;

    @BeforeAll
    static void startKubeletAndStatefulSet(KubernetesClient client) throws Exception {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata()
                .build()).serverSideApply();
        await().atMost(PATIENCE).until(() -> client.serviceAccounts().inNamespace(NAMESPACE).withName("default")
                .get() != null);
        Path peer = Path.of(StatefulSetE2E.class.getResource("/programs/peer.py").toURI());
        ImageRegistry images = ImageRegistry.withDefaults()
                .register("skein-e2e/peer", List.of("/usr/bin/python3", "-u", peer.toString()));
        // Four nodes: three for the replicas, one spare that takes over a lost node's replica.
        kubelet = ProcessKubelet.builder(client).namePrefix("sts-node-").nodes(4).zones(3).images(images)
                .build().start();

        client.services().resource(new ServiceBuilder()
                .withNewMetadata().withName(SERVICE).withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().withClusterIP("None").withPublishNotReadyAddresses(true)
                .addToSelector("app", NAME).addNewPort().withName("peer").withPort(7000).endPort().endSpec()
                .build()).create();
        client.apps().statefulSets().resource(statefulSet()).create();
    }

    @AfterAll
    static void stop(KubernetesClient client) {
        client.apps().statefulSets().inNamespace(NAMESPACE).withName(NAME).delete();
        client.pods().inNamespace(NAMESPACE).withGracePeriod(0).delete();
        if (kubelet != null) {
            kubelet.close();
        }
        client.namespaces().withName(NAMESPACE).delete();
    }

    private static StatefulSet statefulSet() {
        return new StatefulSetBuilder()
                .withNewMetadata().withName(NAME).withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().withReplicas(REPLICAS).withServiceName(SERVICE).withPodManagementPolicy("Parallel")
                .withNewSelector().addToMatchLabels("app", NAME).endSelector()
                .withNewTemplate()
                .withNewMetadata().addToLabels("app", NAME).endMetadata()
                .withNewSpec().withTerminationGracePeriodSeconds(5L)
                .withNewAffinity().withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withTopologyKey("kubernetes.io/hostname")
                .withNewLabelSelector().addToMatchLabels("app", NAME).endLabelSelector()
                .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity().endAffinity()
                .addNewContainer().withName("peer").withImage("skein-e2e/peer:1.0")
                .addNewPort().withName("peer").withContainerPort(7000).endPort()
                .addNewEnv().withName("PEERS").withValue(Integer.toString(REPLICAS)).endEnv()
                .addNewEnv().withName("SERVICE").withValue(SERVICE).endEnv()
                .addNewEnv().withName("STATEFULSET").withValue(NAME).endEnv()
                .addNewEnv().withName("POD_NAMESPACE").withNewValueFrom().withNewFieldRef()
                .withFieldPath("metadata.namespace").endFieldRef().endValueFrom().endEnv()
                .addNewEnv().withName("POD_IP").withNewValueFrom().withNewFieldRef()
                .withFieldPath("status.podIP").endFieldRef().endValueFrom().endEnv()
                .withNewReadinessProbe().withNewTcpSocket().withNewPort("peer").endTcpSocket()
                .withPeriodSeconds(1).endReadinessProbe()
                .addNewVolumeMount().withName("data").withMountPath("/data").endVolumeMount()
                .endContainer()
                .endSpec()
                .endTemplate()
                .addNewVolumeClaimTemplate().withNewMetadata().withName("data").endMetadata()
                .withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                .addToRequests("storage", new Quantity("10Mi")).endResources()
                .endSpec().endVolumeClaimTemplate()
                .endSpec().build();
    }

    private static List<Pod> readyPods(KubernetesClient client) {
        return client.pods().inNamespace(NAMESPACE).withLabel("app", NAME).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> p.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")))
                .toList();
    }

    private static String answer(String ip) throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(ip, 7000), 2000);
            socket.setSoTimeout(2000);
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)).readLine();
        }
    }

    private static PersistentVolume volumeOf(KubernetesClient client, String pod) {
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(NAMESPACE).withName("data-" + pod).get();
        assertThat(pvc.getStatus().getPhase()).isEqualTo("Bound");
        return client.persistentVolumes().withName(pvc.getSpec().getVolumeName()).get();
    }

    private static String affinityNode(PersistentVolume pv) {
        return pv.getSpec().getNodeAffinity().getRequired().getNodeSelectorTerms().getFirst().getMatchExpressions()
                .getFirst().getValues().getFirst();
    }

    @Test
    @Order(1)
    void threeReplicasAreReadyOnThreeNodesEachWithItsOwnIpAndBoundVolume(KubernetesClient client) throws Exception {
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(readyPods(client)).hasSize(REPLICAS));
        List<Pod> pods = readyPods(client);

        assertThat(pods).extracting(p -> p.getSpec().getNodeName()).doesNotHaveDuplicates();
        assertThat(pods).extracting(p -> p.getStatus().getPodIP()).doesNotHaveDuplicates().allMatch(ip -> ip.startsWith(ProcessKubelet.podSubnetPrefix()));
        for (Pod pod : pods) {
            PersistentVolume pv = volumeOf(client, pod.getMetadata().getName());
            assertThat(affinityNode(pv)).isEqualTo(pod.getSpec().getNodeName());
            assertThat(answer(pod.getStatus().getPodIP())).startsWith(pod.getMetadata().getName() + " ");
        }
        // The test JVM resolves pod DNS names too (ClusterDnsResolverProvider), as a Kafka client
        // following advertised listeners will.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                answer(NAME + "-2." + SERVICE + "." + NAMESPACE + ".svc.cluster.local")).startsWith(NAME + "-2 "));
    }

    @Test
    @Order(2)
    void eachPodResolvesTheOthersByDnsNameAndReachesThemOverTcp(KubernetesClient client) {
        await().atMost(PATIENCE).untilAsserted(() -> {
            for (int i = 0; i < REPLICAS; i++) {
                String log = kubelet.log(NAMESPACE, NAME + "-" + i, "peer");
                for (int j = 0; j < REPLICAS; j++) {
                    assertThat(log).contains("reached " + NAME + "-" + j + "." + SERVICE + "." + NAMESPACE
                            + ".svc.cluster.local -> " + NAME + "-" + j + " ");
                }
            }
        });
    }

    @Test
    @Order(3)
    void aPodDeletedAndCreatedAgainUnderItsNameHasOnlyItsNewIpInStatusAndDns(KubernetesClient client) {
        Pod old = client.pods().inNamespace(NAMESPACE).withName(NAME + "-2").get();
        String oldIp = old.getStatus().getPodIP();

        client.pods().inNamespace(NAMESPACE).withName(NAME + "-2").delete();

        await().atMost(PATIENCE).untilAsserted(() -> {
            Pod again = client.pods().inNamespace(NAMESPACE).withName(NAME + "-2").get();
            assertThat(again).isNotNull();
            assertThat(again.getMetadata().getUid()).isNotEqualTo(old.getMetadata().getUid());
            assertThat(readyPods(client)).extracting(p -> p.getMetadata().getName()).contains(NAME + "-2");
        });
        Pod again = client.pods().inNamespace(NAMESPACE).withName(NAME + "-2").get();
        String newIp = again.getStatus().getPodIP();
        assertThat(newIp).isNotEqualTo(oldIp);
        // Nothing of the old pod lands on the new one, also not later (its late status used to add its
        // IP to podIPs, which the API server then refused every status of the new pod for).
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(client.pods().inNamespace(NAMESPACE).withName(NAME + "-2").get().getStatus().getPodIPs())
                        .extracting(PodIP::getIp).containsExactly(newIp));
        // The other pods resolve its name to the new address and reach it there.
        await().atMost(PATIENCE).untilAsserted(() -> {
            for (int i = 0; i < 2; i++) {
                assertThat(kubelet.log(NAMESPACE, NAME + "-" + i, "peer"))
                        .contains("reached " + NAME + "-2." + SERVICE + "." + NAMESPACE + ".svc.cluster.local -> " + NAME + "-2 ")
                        .containsPattern(NAME + "-2\\." + SERVICE + ".*" + java.util.regex.Pattern.quote(newIp));
            }
        });
    }

    @Test
    @Order(4)
    void lostNodeLeavesThePodTerminatingUntilForceDeletedThenItMovesWithAFreshVolume(KubernetesClient client)
            throws Exception {
        Pod victim = client.pods().inNamespace(NAMESPACE).withName(NAME + "-1").get();
        String lostNode = victim.getSpec().getNodeName();
        String oldVolumeId = answer(victim.getStatus().getPodIP()).split(" ")[1];
        String oldClaimUid = client.persistentVolumeClaims().inNamespace(NAMESPACE).withName("data-" + NAME + "-1")
                .get().getMetadata().getUid();

        kubelet.loseNode(lostNode);

        await().atMost(PATIENCE).untilAsserted(() -> {
            Node node = client.nodes().withName(lostNode).get();
            assertThat(node.getStatus().getConditions()).anySatisfy(c -> {
                assertThat(c.getType()).isEqualTo("Ready");
                assertThat(c.getStatus()).isEqualTo("Unknown");
            });
            assertThat(client.pods().inNamespace(NAMESPACE).withName(NAME + "-1").get().getMetadata()
                    .getDeletionTimestamp()).isNotNull();
        });
        // As on a real cluster, nobody confirms the deletion: the pod stays, and is not replaced.
        await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            Pod stuck = client.pods().inNamespace(NAMESPACE).withName(NAME + "-1").get();
            assertThat(stuck).isNotNull();
            assertThat(stuck.getMetadata().getUid()).isEqualTo(victim.getMetadata().getUid());
        });

        client.persistentVolumeClaims().inNamespace(NAMESPACE).withName("data-" + NAME + "-1").delete();
        client.pods().inNamespace(NAMESPACE).withName(NAME + "-1").withGracePeriod(0).delete();

        await().atMost(PATIENCE).untilAsserted(() -> {
            Pod moved = client.pods().inNamespace(NAMESPACE).withName(NAME + "-1").get();
            assertThat(moved).isNotNull();
            assertThat(moved.getMetadata().getUid()).isNotEqualTo(victim.getMetadata().getUid());
            assertThat(readyPods(client)).extracting(p -> p.getMetadata().getName()).contains(NAME + "-1");
        });
        Pod moved = client.pods().inNamespace(NAMESPACE).withName(NAME + "-1").get();
        assertThat(moved.getSpec().getNodeName()).isNotEqualTo(lostNode);
        PersistentVolumeClaim claim = client.persistentVolumeClaims().inNamespace(NAMESPACE)
                .withName("data-" + NAME + "-1").get();
        assertThat(claim.getMetadata().getUid()).isNotEqualTo(oldClaimUid);
        assertThat(affinityNode(volumeOf(client, NAME + "-1"))).isEqualTo(moved.getSpec().getNodeName());
        assertThat(answer(moved.getStatus().getPodIP()).split(" ")[1]).isNotEqualTo(oldVolumeId);
        Set<String> nodes = readyPods(client).stream().map(p -> p.getSpec().getNodeName()).collect(Collectors.toSet());
        assertThat(nodes).hasSize(REPLICAS).doesNotContain(lostNode);
    }
}
