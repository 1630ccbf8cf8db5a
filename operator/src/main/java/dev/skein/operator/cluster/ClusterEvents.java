package dev.skein.operator.cluster;

import dev.skein.operator.model.SkeinCluster;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Kubernetes Events (core/v1) about a SkeinCluster, so {@code kubectl describe skc} and
 * {@code kubectl get events} show what the operator did and why. An Event that cannot be written
 * is logged, never fails the reconcile.
 */
public final class ClusterEvents {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterEvents.class);
    static final String COMPONENT = "skein-operator";

    private final KubernetesClient client;
    private final Clock clock;

    public ClusterEvents(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    public void normal(SkeinCluster cluster, String reason, String message) {
        emit(cluster, "Normal", reason, message);
    }

    public void warning(SkeinCluster cluster, String reason, String message) {
        emit(cluster, "Warning", reason, message);
    }

    private void emit(SkeinCluster cluster, String type, String reason, String message) {
        String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
        Event event = new EventBuilder()
                .withNewMetadata().withNamespace(cluster.getMetadata().getNamespace())
                .withName(cluster.getMetadata().getName() + "." + Long.toHexString(clock.millis())
                        + String.format(Locale.ROOT, "%04x", ThreadLocalRandom.current().nextInt(0x10000)))
                .endMetadata()
                .withNewInvolvedObject().withApiVersion(cluster.getApiVersion()).withKind(cluster.getKind())
                .withName(cluster.getMetadata().getName()).withNamespace(cluster.getMetadata().getNamespace())
                .withUid(cluster.getMetadata().getUid()).withResourceVersion(cluster.getMetadata().getResourceVersion())
                .endInvolvedObject()
                .withType(type).withReason(reason)
                .withMessage(message.length() > 1024 ? message.substring(0, 1024) : message)
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT).withReportingInstance(COMPONENT)
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                .build();
        try {
            client.v1().events().inNamespace(cluster.getMetadata().getNamespace()).resource(event).create();
        } catch (KubernetesClientException e) {
            LOG.warn("SkeinCluster {}/{}: could not record Event {} ({}): {}", cluster.getMetadata().getNamespace(),
                    cluster.getMetadata().getName(), reason, message, e.getMessage());
        }
    }
}
