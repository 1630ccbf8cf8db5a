package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;

/**
 * The two Services of a cluster: the headless one that gives every broker a stable DNS name (also
 * before it is ready, since the controller quorum must form before any broker is ready), and the
 * bootstrap Service clients connect to first.
 */
public final class BrokerServices {
    private BrokerServices() {
    }

    public static Service headless(SkeinCluster cluster) {
        ClusterNames names = new ClusterNames(cluster);
        return new ServiceBuilder().withMetadata(names.metadata(names.headlessService(), cluster))
                .withNewSpec()
                .withClusterIP("None")
                .withPublishNotReadyAddresses(true)
                .withSelector(names.selector())
                .withPorts(port("kafka", ClusterNames.CLIENT_PORT), port("controller", ClusterNames.CONTROLLER_PORT))
                .endSpec().build();
    }

    public static Service bootstrap(SkeinCluster cluster) {
        ClusterNames names = new ClusterNames(cluster);
        return new ServiceBuilder().withMetadata(names.metadata(names.bootstrapService(), cluster))
                .withNewSpec()
                .withType("ClusterIP")
                .withSelector(names.selector())
                .withPorts(port("kafka", ClusterNames.CLIENT_PORT))
                .endSpec().build();
    }

    private static ServicePort port(String name, int port) {
        return new ServicePortBuilder().withName(name).withPort(port).withNewTargetPort(name).withProtocol("TCP").build();
    }
}
