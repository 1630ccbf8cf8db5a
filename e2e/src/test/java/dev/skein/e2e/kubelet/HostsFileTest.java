package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class HostsFileTest {

    private static Service headless(boolean publishNotReady) {
        return new ServiceBuilder().withNewMetadata().withName("peers").withNamespace("ns").endMetadata()
                .withNewSpec().withClusterIP("None").withPublishNotReadyAddresses(publishNotReady).endSpec().build();
    }

    private static EndpointSlice slice() {
        return new EndpointSliceBuilder().withNewMetadata().withName("peers-abc").withNamespace("ns")
                .addToLabels("kubernetes.io/service-name", "peers").endMetadata()
                .addNewEndpoint().withAddresses("10.213.0.2").withHostname("peer-0").withNewConditions().withReady(true)
                .endConditions().endEndpoint()
                .addNewEndpoint().withAddresses("10.213.0.3").withHostname("peer-1").withNewConditions().withReady(false)
                .endConditions().endEndpoint()
                .build();
    }

    @Test
    void readyEndpointsOfAServiceGetServiceAndPodNames() {
        String hosts = HostsFile.render(List.of(), List.of(headless(false)), List.of(slice()));

        assertThat(hosts).contains("10.213.0.2\tpeers.ns.svc.cluster.local peers.ns.svc "
                + "peer-0.peers.ns.svc.cluster.local peer-0.peers.ns.svc\n");
        assertThat(hosts).doesNotContain("10.213.0.3");
    }

    @Test
    void notReadyEndpointsArePublishedWhenTheServiceAsksForIt() {
        String hosts = HostsFile.render(List.of(), List.of(headless(true)), List.of(slice()));

        assertThat(hosts).contains("peer-1.peers.ns.svc.cluster.local");
    }

    @Test
    void podWithHostnameAndSubdomainIsNamedEvenWithoutAService() {
        Pod pod = new PodBuilder().withNewMetadata().withName("peer-2").withNamespace("ns").endMetadata()
                .withNewSpec().withHostname("peer-2").withSubdomain("peers").endSpec()
                .withNewStatus().withPodIP("10.213.0.4").endStatus().build();

        String hosts = HostsFile.render(List.of(pod), List.of(), List.of());

        assertThat(hosts).contains("10.213.0.4\tpeer-2.peers.ns.svc.cluster.local peer-2.peers.ns.svc\n");
        assertThat(HostsFile.forPod(hosts, pod, "10.213.0.4"))
                .endsWith("10.213.0.4\tpeer-2.peers.ns.svc.cluster.local peer-2\n");
    }
}
