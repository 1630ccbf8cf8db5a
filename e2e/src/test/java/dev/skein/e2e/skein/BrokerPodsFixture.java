package dev.skein.e2e.skein;

import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.time.Duration;
import java.util.List;

import static org.awaitility.Awaitility.await;

/**
 * Set-up and tear-down shared by the operator E2Es whose brokers run as pods: the CRDs, a
 * namespace, a process kubelet whose image {@code skein/broker} is this build's broker jar; and, at
 * the end, everything removed again whatever state the test left it in.
 */
final class BrokerPodsFixture {
    private BrokerPodsFixture() {
    }

    /** Installs the CRDs, creates the namespace, and starts {@code nodes} nodes, one zone each. */
    static ProcessKubelet start(KubernetesClient client, String namespace, int nodes) throws Exception {
        SkeinCrds.install(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                .serverSideApply();
        ImageRegistry images = ImageRegistry.withDefaults().register("skein/broker",
                List.of(SkeinJars.java(), "-jar", ImageRegistry.staged(SkeinJars.broker()).toString()));
        return ProcessKubelet.builder(client).namePrefix("skein-node-").nodes(nodes).zones(nodes).images(images)
                .build().start();
    }

    /**
     * Deletes the SkeinTopics while the operator still runs (their finalizers need it), stops it,
     * then deletes the SkeinClusters, pods and claims, stops the kubelet and deletes the namespace.
     */
    static void stop(KubernetesClient client, String namespace, OperatorProcess operator, ProcessKubelet kubelet)
            throws Exception {
        var topics = client.genericKubernetesResources(SkeinResources.TOPICS).inNamespace(namespace);
        try {
            if (operator != null && operator.isAlive() && !topics.list().getItems().isEmpty()) {
                topics.delete();
                await().atMost(Duration.ofSeconds(60)).until(() -> topics.list().getItems().isEmpty());
            }
        } finally {
            if (operator != null) {
                operator.close();
            }
            SkeinResources.deleteIgnoringFinalizers(client, namespace, SkeinResources.TOPICS, SkeinResources.CLUSTERS);
            client.pods().inNamespace(namespace).withGracePeriod(0).delete();
            client.persistentVolumeClaims().inNamespace(namespace).delete();
            if (kubelet != null) {
                kubelet.close();
            }
            client.namespaces().withName(namespace).delete();
        }
    }
}
