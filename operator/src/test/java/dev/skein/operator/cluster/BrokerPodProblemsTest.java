package dev.skein.operator.cluster;

import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class BrokerPodProblemsTest {

    private static Pod pod(String name, String waitingReason, String message) {
        ContainerState state = waitingReason == null
                ? new ContainerStateBuilder().withNewRunning().endRunning().build()
                : new ContainerStateBuilder().withNewWaiting().withReason(waitingReason).withMessage(message).endWaiting()
                .build();
        return new PodBuilder().withNewMetadata().withName(name).endMetadata().withNewStatus()
                .addNewContainerStatus().withName("broker").withImage("registry.example/skein/broker:9.9")
                .withState(state).endContainerStatus().endStatus().build();
    }

    @Test
    void anImageThatCannotBePulledIsNamedWithItsPod() {
        List<Pod> pods = List.of(pod("main-broker-0", null, null),
                pod("main-broker-2", "ImagePullBackOff", "Back-off pulling image"),
                pod("main-broker-1", "ErrImagePull", "manifest unknown"));

        assertThat(BrokerPodProblems.find(pods, null, name -> false)).hasValueSatisfying(p -> {
            assertThat(p.reason()).isEqualTo(ClusterReason.ImagePullFailed);
            assertThat(p.message()).isEqualTo("pod main-broker-1 cannot pull image registry.example/skein/broker:9.9 "
                    + "(spec.image; ErrImagePull: manifest unknown)");
        });
    }

    @Test
    void aMissingStorageClassIsNamedAndAnExistingOrDefaultOneIsNoProblem() {
        List<Pod> pending = List.of(pod("main-broker-0", "ContainerCreating", null));
        Set<String> classes = Set.of("fast");

        assertThat(BrokerPodProblems.find(pending, "slow", classes::contains)).hasValueSatisfying(p -> {
            assertThat(p.reason()).isEqualTo(ClusterReason.StorageClassNotFound);
            assertThat(p.message()).startsWith("spec.storage.storageClassName slow names no StorageClass");
        });
        assertThat(BrokerPodProblems.find(pending, "fast", classes::contains)).isEmpty();
        assertThat(BrokerPodProblems.find(pending, null, name -> {
            throw new AssertionError("no class named: nothing to look up");
        })).isEmpty();
    }

    @Test
    void podsStartingOrRestartingAreNoProblemToReport() {
        assertThat(BrokerPodProblems.find(List.of(pod("main-broker-0", "ContainerCreating", null),
                pod("main-broker-1", "CrashLoopBackOff", "back-off"), new PodBuilder().withNewMetadata()
                        .withName("main-broker-2").endMetadata().build()), null, n -> true)).isEmpty();
    }
}
