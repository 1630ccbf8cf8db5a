package dev.skein.e2e.skein;

import dev.skein.e2e.ControlPlane;
import dev.skein.e2e.ControlPlaneExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.skein.e2e.skein.SkeinResources.CLUSTERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two replicas of the operator are safe: they elect a leader through a Lease, only the leader
 * reconciles, and when the leader is killed (SIGKILL, the Lease not released) the other takes over
 * and reconciles what was created meanwhile.
 */
@ExtendWith(ControlPlaneExtension.class)
class OperatorLeaderElectionE2E {
    private static final String NAMESPACE = "skein-leader-e2e";

    private static OperatorProcess first;
    private static OperatorProcess second;

    @BeforeAll
    static void start(KubernetesClient client, ControlPlane controlPlane) throws Exception {
        SkeinCrds.install(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
                .serverSideApply();
        List<String> election = List.of("--leader-election-namespace", NAMESPACE);
        first = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeincluster", 30, false, election,
                NAMESPACE + "-1");
        second = OperatorProcess.start(controlPlane.kubeconfig(), NAMESPACE, "skeincluster", 30, false, election,
                NAMESPACE + "-2");
    }

    @AfterAll
    static void stop(KubernetesClient client) throws InterruptedException {
        for (OperatorProcess p : new OperatorProcess[]{first, second}) {
            if (p != null) {
                p.close();
            }
        }
        client.namespaces().withName(NAMESPACE).delete();
    }

    private static void createCluster(KubernetesClient client, String name) {
        client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE).resource(new GenericKubernetesResourceBuilder()
                .withApiVersion("skein.dev/v1alpha1").withKind("SkeinCluster")
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", Map.of("brokers", 1)).build()).create();
    }

    /** The cluster's objects exist and its status is written: a whole reconcile has run. */
    private static boolean reconciled(KubernetesClient client, String cluster) {
        var resource = client.genericKubernetesResources(CLUSTERS).inNamespace(NAMESPACE).withName(cluster).get();
        return client.configMaps().inNamespace(NAMESPACE).withName(cluster + "-config").get() != null
                && resource.getAdditionalProperties().get("status") != null;
    }

    private static String holder(KubernetesClient client) {
        Lease lease = client.leases().inNamespace(NAMESPACE).withName("skein-operator").get();
        return lease == null ? null : lease.getSpec().getHolderIdentity();
    }

    @Test
    void onlyTheLeaderReconcilesAndTheOtherTakesOverWhenItIsKilled(KubernetesClient client) throws Exception {
        await().atMost(Duration.ofSeconds(60)).until(() -> holder(client) != null);
        String leaderIdentity = holder(client);
        OperatorProcess leader = leaderIdentity.endsWith("-" + first.pid()) ? first : second;
        OperatorProcess standby = leader == first ? second : first;
        assertThat(leaderIdentity).endsWith("-" + leader.pid());

        createCluster(client, "before");
        await().atMost(Duration.ofSeconds(60)).until(() -> reconciled(client, "before"));
        assertThat(standby.logTail(200)).doesNotContain("SkeinCluster " + NAMESPACE + "/before");
        assertThat(leader.logTail(200)).contains("SkeinCluster " + NAMESPACE + "/before");

        leader.kill();
        createCluster(client, "after");
        long killed = System.nanoTime();
        await().atMost(Duration.ofSeconds(90)).until(() -> reconciled(client, "after"));
        long takeoverMs = (System.nanoTime() - killed) / 1_000_000;
        System.out.printf("OperatorLeaderElectionE2E: leader killed -> standby reconciled a new SkeinCluster in %d ms%n",
                takeoverMs);
        assertThat(holder(client)).endsWith("-" + standby.pid());
        assertThat(standby.isAlive()).isTrue();
    }
}
