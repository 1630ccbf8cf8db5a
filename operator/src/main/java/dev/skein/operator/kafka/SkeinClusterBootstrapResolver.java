package dev.skein.operator.kafka;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.util.Optional;

/**
 * Resolves a cluster's bootstrap from its SkeinCluster resource: {@code status.bootstrapServers}
 * when the cluster reconciler has set it, else the bootstrap Service's DNS name
 * {@code <cluster>-bootstrap.<namespace>.svc:9092}. A cluster that is absent or being deleted
 * resolves to empty.
 */
public final class SkeinClusterBootstrapResolver implements BootstrapResolver {
    public static final int CLIENT_PORT = 9092;

    private final KubernetesClient client;

    public SkeinClusterBootstrapResolver(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Optional<String> bootstrapServers(String namespace, String cluster) {
        SkeinCluster resource = client.resources(SkeinCluster.class).inNamespace(namespace).withName(cluster).get();
        if (resource == null || resource.getMetadata().getDeletionTimestamp() != null) {
            return Optional.empty();
        }
        String fromStatus = resource.getStatus() == null ? null : resource.getStatus().getBootstrapServers();
        return Optional.of(fromStatus != null && !fromStatus.isBlank() ? fromStatus : serviceBootstrap(namespace, cluster));
    }

    /** The bootstrap Service's address inside the Kubernetes cluster. */
    public static String serviceBootstrap(String namespace, String cluster) {
        return cluster + "-bootstrap." + namespace + ".svc:" + CLIENT_PORT;
    }
}
