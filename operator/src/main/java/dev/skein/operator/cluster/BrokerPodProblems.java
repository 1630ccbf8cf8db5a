package dev.skein.operator.cluster;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Why broker pods cannot run, when it is something the user must fix in the SkeinCluster: an image
 * that cannot be pulled, a StorageClass that does not exist. Such a cluster never turns ready on its
 * own, so its Ready condition names the cause instead of counting not-ready brokers.
 */
final class BrokerPodProblems {
    /** The waiting reasons Kubernetes gives a container whose image it cannot get. */
    static final Set<String> IMAGE_REASONS = Set.of("ErrImagePull", "ImagePullBackOff", "InvalidImageName",
            "ErrImageNeverPull");

    record Problem(ClusterReason reason, String message) {
    }

    private BrokerPodProblems() {
    }

    /**
     * @param storageClass the class the spec asks for, or null for the cluster's default
     * @param storageClassExists whether a StorageClass of that name exists (asked only when one is named)
     */
    static Optional<Problem> find(List<Pod> pods, String storageClass, Predicate<String> storageClassExists) {
        if (storageClass != null && !storageClass.isBlank() && !storageClassExists.test(storageClass)) {
            return Optional.of(new Problem(ClusterReason.StorageClassNotFound, "spec.storage.storageClassName "
                    + storageClass + " names no StorageClass of this cluster, so the broker volumes cannot be "
                    + "provisioned"));
        }
        return pods.stream().sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .flatMap(pod -> imageProblem(pod).stream()).findFirst();
    }

    private static Optional<Problem> imageProblem(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return Optional.empty();
        }
        for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
            if (c.getState() != null && c.getState().getWaiting() != null
                    && IMAGE_REASONS.contains(c.getState().getWaiting().getReason())) {
                String detail = c.getState().getWaiting().getMessage();
                return Optional.of(new Problem(ClusterReason.ImagePullFailed, "pod " + pod.getMetadata().getName()
                        + " cannot pull image " + c.getImage() + " (spec.image; " + c.getState().getWaiting().getReason()
                        + (detail == null || detail.isBlank() ? "" : ": " + detail) + ")"));
            }
        }
        return Optional.empty();
    }
}
