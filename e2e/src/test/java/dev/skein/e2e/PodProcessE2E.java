package dev.skein.e2e;

import dev.skein.e2e.kubelet.ImageRegistry;
import dev.skein.e2e.kubelet.ProcessKubelet;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pods bound to the process kubelet's nodes run as local processes with their own network
 * namespace and IP, get the environment a kubelet gives them, are probed, restarted and deleted
 * gracefully, and report their status through the real API server.
 */
@ExtendWith(ControlPlaneExtension.class)
class PodProcessE2E {

    private static final String NAMESPACE = "pod-process";
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private static ProcessKubelet kubelet;

    @BeforeAll
    static void startKubelet(KubernetesClient client) {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata()
                .build()).serverSideApply();
        // The default ServiceAccount of a new namespace comes from the controller manager.
        await().atMost(PATIENCE).until(() -> client.serviceAccounts().inNamespace(NAMESPACE).withName("default")
                .get() != null);
        ImageRegistry images = ImageRegistry.withDefaults()
                .register("skein-e2e/http-server", List.of("/usr/bin/python3", "-m", "http.server"));
        kubelet = ProcessKubelet.builder(client).namePrefix("pod-node-").images(images).build().start();
    }

    @AfterAll
    static void stopKubelet(KubernetesClient client) {
        client.pods().inNamespace(NAMESPACE).withGracePeriod(0).delete();
        if (kubelet != null) {
            kubelet.close();
        }
        client.namespaces().withName(NAMESPACE).delete();
    }

    private static PodBuilder pod(String name, String image, String... args) {
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().withTerminationGracePeriodSeconds(10L)
                .addNewContainer().withName("main").withImage(image).withArgs(args).endContainer()
                .endSpec();
    }

    private static Pod get(KubernetesClient client, String name) {
        return client.pods().inNamespace(NAMESPACE).withName(name).get();
    }

    private static boolean ready(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions()
                .stream().anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
    }

    private static ContainerStatus mainStatus(Pod pod) {
        assertThat(pod.getStatus().getContainerStatuses()).isNotEmpty();
        return pod.getStatus().getContainerStatuses().getFirst();
    }

    private static EnvVar field(String name, String path) {
        return new EnvVarBuilder().withName(name).withNewValueFrom().withNewFieldRef().withFieldPath(path)
                .endFieldRef().endValueFrom().build();
    }

    @Test
    void podRunsAsAProcessWithItsOwnIpAndTheKubeletEnvironment(KubernetesClient client) {
        client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("settings")
                .withNamespace(NAMESPACE).endMetadata().addToData("greeting", "hello").build()).create();
        client.secrets().resource(new SecretBuilder().withNewMetadata().withName("creds").withNamespace(NAMESPACE)
                .endMetadata().addToStringData("password", "s3cret").build()).create();
        Pod pod = pod("env", "skein-e2e/shell",
                "echo POD_NAME=$POD_NAME NS=$NS POD_IP=$POD_IP NODE=$NODE GREETING=$GREETING PASSWORD=$PASSWORD"
                        + " EXPANDED=$(GREETING)-x; exec sleep infinity")
                .editSpec().editFirstContainer()
                .addToEnv(field("POD_NAME", "metadata.name"), field("NS", "metadata.namespace"),
                        field("POD_IP", "status.podIP"), field("NODE", "spec.nodeName"))
                .addNewEnv().withName("GREETING").withNewValueFrom().withNewConfigMapKeyRef("greeting", "settings", false)
                .endValueFrom().endEnv()
                .addNewEnv().withName("PASSWORD").withNewValueFrom().withNewSecretKeyRef("password", "creds", false)
                .endValueFrom().endEnv()
                .endContainer().endSpec().build();

        client.pods().resource(pod).create();

        Pod running = await().atMost(PATIENCE).until(() -> get(client, "env"), PodProcessE2E::ready);
        assertThat(running.getStatus().getPhase()).isEqualTo("Running");
        assertThat(running.getStatus().getPodIP()).startsWith("10.213.");
        assertThat(mainStatus(running).getState().getRunning()).isNotNull();
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(kubelet.log(NAMESPACE, "env", "main")).contains(
                "POD_NAME=env NS=" + NAMESPACE + " POD_IP=" + running.getStatus().getPodIP()
                        + " NODE=" + running.getSpec().getNodeName()
                        + " GREETING=hello PASSWORD=s3cret EXPANDED=hello-x"));
    }

    @Test
    void readinessProbeGatesReadyAndThePodIsReachableOnItsIp(KubernetesClient client) throws Exception {
        Probe readiness = new ProbeBuilder().withNewHttpGet().withPath("/").withNewPort(8080).endHttpGet()
                .withPeriodSeconds(1).build();
        Probe liveness = new ProbeBuilder().withNewTcpSocket().withNewPort(8080).endTcpSocket()
                .withPeriodSeconds(1).withInitialDelaySeconds(2).build();
        client.pods().resource(pod("web", "skein-e2e/http-server", "8080").editSpec().editFirstContainer()
                .withReadinessProbe(readiness).withLivenessProbe(liveness).endContainer().endSpec().build()).create();

        Pod web = await().atMost(PATIENCE).until(() -> get(client, "web"), PodProcessE2E::ready);

        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://" + web.getStatus().getPodIP() + ":8080/")).timeout(Duration.ofSeconds(5))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(mainStatus(get(client, "web")).getRestartCount()).isZero();
    }

    @Test
    void unknownImageLeavesTheContainerWaitingWithErrImagePullAndAnEvent(KubernetesClient client) {
        client.pods().resource(pod("no-image", "registry.invalid/nothing:1.0").build()).create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            Pod pod = get(client, "no-image");
            assertThat(pod.getStatus().getPhase()).isEqualTo("Pending");
            assertThat(mainStatus(pod).getState().getWaiting().getReason()).isEqualTo("ErrImagePull");
        });
        assertThat(client.v1().events().inNamespace(NAMESPACE).list().getItems())
                .anySatisfy(e -> {
                    assertThat(e.getInvolvedObject().getName()).isEqualTo("no-image");
                    assertThat(e.getType()).isEqualTo("Warning");
                    assertThat(e.getMessage()).contains("registry.invalid/nothing:1.0");
                });
    }

    @Test
    void deletionSendsSigtermAndTheKubeletFinishesTheDelete(KubernetesClient client) {
        client.pods().resource(pod("graceful", "skein-e2e/shell",
                "trap 'echo got SIGTERM; exit 0' TERM; echo started; while true; do sleep 0.1; done").build()).create();
        await().atMost(PATIENCE).until(() -> kubelet.log(NAMESPACE, "graceful", "main").contains("started"));

        client.pods().inNamespace(NAMESPACE).withName("graceful").delete();

        await().atMost(Duration.ofSeconds(8)).until(() -> get(client, "graceful") == null);
        assertThat(kubelet.log(NAMESPACE, "graceful", "main")).contains("got SIGTERM");
    }

    @Test
    void crashingContainerIsRestartedWithBackOff(KubernetesClient client) {
        client.pods().resource(pod("crasher", "skein-e2e/shell", "echo run; exit 3").build()).create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            ContainerStatus status = mainStatus(get(client, "crasher"));
            assertThat(status.getRestartCount()).isGreaterThanOrEqualTo(2);
            assertThat(status.getLastState().getTerminated().getExitCode()).isEqualTo(3);
        });
    }

    @Test
    void podWithRestartPolicyNeverSucceedsWhenItsContainerExitsZero(KubernetesClient client) {
        client.pods().resource(pod("job", "skein-e2e/shell", "echo done").editSpec().withRestartPolicy("Never")
                .endSpec().build()).create();

        await().atMost(PATIENCE).untilAsserted(() -> {
            Pod pod = get(client, "job");
            assertThat(pod.getStatus().getPhase()).isEqualTo("Succeeded");
            assertThat(pod.getStatus().getConditions()).filteredOn(c -> c.getType().equals("Ready"))
                    .extracting(PodCondition::getStatus).containsExactly("False");
        });
    }

    @Test
    void inClusterClientReachesTheApiServerWithItsServiceAccountToken(KubernetesClient client) {
        client.rbac().roleBindings().resource(new RoleBindingBuilder()
                .withNewMetadata().withName("default-view").withNamespace(NAMESPACE).endMetadata()
                .withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole").withName("view")
                .endRoleRef()
                .addNewSubject().withKind("ServiceAccount").withName("default").withNamespace(NAMESPACE).endSubject()
                .build()).create();

        client.pods().resource(pod("in-cluster", "skein-e2e/shell",
                "T=/var/run/secrets/kubernetes.io/serviceaccount; "
                        + "curl -sS --cacert $T/ca.crt -H \"Authorization: Bearer $(cat $T/token)\" -o /dev/null"
                        + " -w 'HTTP %{http_code}\\n' https://kubernetes.default.svc/api/v1/namespaces/$(cat $T/namespace)/pods; "
                        + "curl -sS --cacert $T/ca.crt -H \"Authorization: Bearer $(cat $T/token)\" -o /dev/null"
                        + " -w 'HTTP %{http_code}\\n' https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/nodes; "
                        + "exec sleep infinity").build()).create();

        // Reading pods of its namespace is allowed (view), listing nodes is not: authenticated as
        // the ServiceAccount, authorized by RBAC.
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(kubelet.log(NAMESPACE, "in-cluster", "main"))
                .contains("HTTP 200\nHTTP 403"));
    }

    @Test
    void readOnlyRootFilesystemRefusesWritesOutsideTheContainersVolumes(KubernetesClient client) {
        String script = String.join("\n",
                "if touch /written-to-root 2>/dev/null; then echo root=writable; else echo root=read-only; fi",
                "if touch /scratch/written 2>/dev/null; then echo volume=writable; else echo volume=read-only; fi",
                "exec sleep infinity");
        client.pods().resource(new PodBuilder()
                .withNewMetadata().withName("read-only").withNamespace(NAMESPACE).endMetadata()
                .withNewSpec()
                .addNewContainer().withName("main").withImage("skein-e2e/shell").withArgs(script)
                .withNewSecurityContext().withReadOnlyRootFilesystem(true).endSecurityContext()
                .addNewVolumeMount().withName("scratch").withMountPath("/scratch").endVolumeMount().endContainer()
                .addNewContainer().withName("writable").withImage("skein-e2e/shell").withArgs(script)
                .addNewVolumeMount().withName("scratch").withMountPath("/scratch").endVolumeMount().endContainer()
                .addNewVolume().withName("scratch").withNewEmptyDir().endEmptyDir().endVolume()
                .endSpec().build()).create();

        await().atMost(PATIENCE).until(() -> get(client, "read-only"), PodProcessE2E::ready);
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(kubelet.log(NAMESPACE, "read-only", "main")).contains("root=read-only\nvolume=writable\n");
            // without the setting, the root takes writes (into the container's own layer)
            assertThat(kubelet.log(NAMESPACE, "read-only", "writable")).contains("root=writable\nvolume=writable\n");
        });
    }

    @Test
    void initContainersRunInOrderBeforeTheContainerAndShareItsVolumes(KubernetesClient client) {
        client.pods().resource(new PodBuilder()
                .withNewMetadata().withName("init").withNamespace(NAMESPACE).endMetadata()
                .withNewSpec()
                .addNewInitContainer().withName("first").withImage("skein-e2e/shell")
                .withArgs("echo one > /work/steps").addNewVolumeMount().withName("work").withMountPath("/work").endVolumeMount()
                .endInitContainer()
                .addNewInitContainer().withName("second").withImage("skein-e2e/shell")
                .withArgs("echo two >> /work/steps").addNewVolumeMount().withName("work").withMountPath("/work").endVolumeMount()
                .endInitContainer()
                .addNewContainer().withName("main").withImage("skein-e2e/shell")
                .withArgs("cat /work/steps; exec sleep infinity")
                .addNewVolumeMount().withName("work").withMountPath("/work").endVolumeMount().endContainer()
                .addNewVolume().withName("work").withNewEmptyDir().endEmptyDir().endVolume()
                .endSpec().build()).create();

        Pod pod = await().atMost(PATIENCE).until(() -> get(client, "init"), PodProcessE2E::ready);

        assertThat(pod.getStatus().getInitContainerStatuses()).extracting(s -> s.getState().getTerminated().getExitCode())
                .containsExactly(0, 0);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(kubelet.log(NAMESPACE, "init", "main"))
                .contains("one\ntwo\n"));
    }

    @Test
    void execProbesAndThePreStopHookRunInsideTheContainer(KubernetesClient client) {
        Probe startup = new ProbeBuilder().withNewExec().withCommand("test", "-f", "/tmp/started").endExec()
                .withPeriodSeconds(1).withFailureThreshold(20).build();
        Probe readiness = new ProbeBuilder().withNewExec().withCommand("cat", "/tmp/started").endExec()
                .withPeriodSeconds(1).build();
        client.pods().resource(pod("hooks", "skein-e2e/shell",
                "trap 'echo got SIGTERM; exit 0' TERM; sleep 2; touch /tmp/started; echo started; "
                        + "while true; do if [ -f /tmp/stopping ]; then echo saw preStop; rm /tmp/stopping; fi; sleep 0.1; done")
                .editSpec().editFirstContainer().withStartupProbe(startup).withReadinessProbe(readiness)
                .withNewLifecycle().withNewPreStop().withNewExec().withCommand("/bin/sh", "-c", "touch /tmp/stopping; sleep 1").endExec()
                .endPreStop().endLifecycle()
                .endContainer().endSpec().build()).create();

        Pod pod = await().atMost(PATIENCE).until(() -> get(client, "hooks"), PodProcessE2E::ready);
        assertThat(mainStatus(pod).getStarted()).isTrue();
        // /tmp/started exists only in the container's own root: the probes ran inside it.
        assertThat(Path.of("/tmp/started")).doesNotExist();

        client.pods().inNamespace(NAMESPACE).withName("hooks").delete();

        await().atMost(Duration.ofSeconds(8)).until(() -> get(client, "hooks") == null);
        assertThat(kubelet.log(NAMESPACE, "hooks", "main")).containsSubsequence("started", "saw preStop", "got SIGTERM");
    }
}
