package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the pods bound to the process kubelet's nodes as local processes, one network namespace per
 * pod, and reports their status as a kubelet does.
 *
 * <p>What it honours: command/args (with {@code $(VAR)} expansion), env values, {@code fieldRef}
 * (name, namespace, uid, node name, service account, pod IP, host IP, labels, annotations),
 * {@code configMapKeyRef}, {@code secretKeyRef}, {@code envFrom}; startup, readiness and liveness
 * probes (httpGet, tcpSocket, exec inside the container); graceful deletion (preStop exec hook,
 * SIGTERM to the main process, SIGKILL to its process group after the grace period, then the final
 * delete); restartPolicy with exponential back-off (1 s doubling, at
 * most 20 s); volumes ({@link PodVolumes}) bind-mounted into a private mount namespace whose root
 * is an overlay of the host's; cluster DNS names through /etc/hosts ({@link HostsFile}). An image
 * the {@link ImageRegistry} does not know leaves the container waiting with reason ErrImagePull and
 * a Warning event. Init containers run to completion, in order, before the containers (restarted
 * per restartPolicy). Not yet: sidecar init containers, configMap/secret volume updates,
 * postStart hooks, httpGet preStop hooks.
 *
 * <p>Every method runs on the kubelet loop thread; process exits and probe results are handed back
 * to it.
 */
final class PodRuntime {

    private static final Duration MAX_BACKOFF = Duration.ofSeconds(20);
    private static final Pattern VAR_REF = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_.-]*)\\)|\\$\\$");
    private static final Set<String> HOST_ENV_KEPT = Set.of("PATH", "HOME", "JAVA_HOME", "LANG", "PYENV_ROOT");

    private final KubernetesClient client;
    private final ImageRegistry images;
    private final PodNetwork network;
    private final Path logDir;
    private final Path rootDir;
    private final Path resolvConf;
    private String clusterHosts = "127.0.0.1\tlocalhost\n";
    private final PodVolumes volumes;
    private final Clock clock;
    private final ScheduledExecutorService loop;
    private final ExecutorService probes;
    private final Map<String, String> hostIps;
    private final Map<String, RunningPod> pods = new LinkedHashMap<>();
    private final Set<String> deadNodes;
    private final Set<String> partitionedNodes = new HashSet<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    /** A pod this kubelet runs. */
    private static final class RunningPod {
        Pod pod;
        final List<ContainerRun> initContainers = new ArrayList<>();
        final List<ContainerRun> containers = new ArrayList<>();
        /** How many init containers have completed. */
        int initDone;
        PodNetwork.Attachment net;
        Map<String, Path> volumes;
        String startTime;
        boolean terminating;
        String finalPhase;

        List<ContainerRun> all() {
            List<ContainerRun> all = new ArrayList<>(initContainers);
            all.addAll(containers);
            return all;
        }

        boolean initialized() {
            return initDone == initContainers.size();
        }
    }

    PodRuntime(KubernetesClient client, ImageRegistry images, PodNetwork network, Path logDir, Path rootDir,
               Path resolvConf, Clock clock, ScheduledExecutorService loop, ExecutorService probes,
               Map<String, String> hostIps, Set<String> deadNodes) {
        this.deadNodes = deadNodes;
        this.client = client;
        this.images = images;
        this.network = network;
        this.logDir = logDir;
        this.rootDir = rootDir;
        this.resolvConf = resolvConf;
        this.volumes = new PodVolumes(client);
        this.clock = clock;
        this.loop = loop;
        this.probes = probes;
        this.hostIps = hostIps;
    }

    // ---- events from the informer -------------------------------------------------------------

    /** A pod was added or changed in the API. */
    void sync(Pod pod) {
        String node = pod.getSpec().getNodeName();
        if (node == null || !hostIps.containsKey(node) || deadNodes.contains(node)) {
            return;
        }
        String uid = pod.getMetadata().getUid();
        RunningPod rp = pods.get(uid);
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            if (rp == null) {
                finalDelete(pod);
            } else if (!rp.terminating) {
                rp.pod = pod;
                Long grace = pod.getMetadata().getDeletionGracePeriodSeconds();
                terminate(rp, Duration.ofSeconds(grace == null ? 30 : grace));
            }
            return;
        }
        if (rp == null) {
            if (isFinished(pod)) {
                return;
            }
            start(pod);
        } else {
            rp.pod = pod;
        }
    }

    /** A pod is gone from the API (force-deleted, or after our final delete). */
    void forget(Pod pod) {
        RunningPod rp = pods.remove(pod.getMetadata().getUid());
        if (rp != null) {
            rp.all().forEach(c -> signal(c, "KILL"));
            releaseNetwork(rp);
        }
    }

    // ---- faults -------------------------------------------------------------------------------

    /**
     * The node's kubelet dies (the caller has marked it dead): its pods' processes are killed, their
     * network cut, no status is posted.
     */
    void killNode(String node) {
        for (RunningPod rp : podsOn(node)) {
            rp.all().forEach(c -> {
                signal(c, "KILL");
                c.process = null;
            });
            if (rp.net != null) {
                network.setLinkUp(rp.net, false);
            }
        }
    }

    /**
     * The node's kubelet starts again (the caller has marked it alive): it drops its old pods and
     * syncs the ones the API still binds to it.
     */
    void reviveNode(String node) {
        for (RunningPod rp : podsOn(node)) {
            pods.remove(rp.pod.getMetadata().getUid());
            releaseNetwork(rp);
        }
        client.pods().inAnyNamespace().withField("spec.nodeName", node).list().getItems().forEach(this::sync);
    }

    /**
     * Cuts (or heals) the network of the node's pods: their links to the bridge go down, so nothing
     * reaches them and they reach nothing, while the node keeps heartbeating and reporting them.
     */
    void partition(String node, boolean cut) {
        if (cut) {
            partitionedNodes.add(node);
        } else {
            partitionedNodes.remove(node);
        }
        podsOn(node).stream().filter(rp -> rp.net != null).forEach(rp -> network.setLinkUp(rp.net, !cut));
    }

    /** Stops every pod process and releases every network namespace (kubelet shutdown). */
    void shutdown() {
        for (RunningPod rp : pods.values()) {
            rp.all().forEach(c -> signal(c, "KILL"));
            releaseNetwork(rp);
        }
        pods.clear();
    }

    /** Where a container's stdout and stderr go. */
    Path logFile(String namespace, String pod, String container) {
        return logDir.resolve(namespace + "_" + pod).resolve(container + ".log");
    }

    private List<RunningPod> podsOn(String node) {
        return pods.values().stream().filter(rp -> node.equals(rp.pod.getSpec().getNodeName())).toList();
    }

    private static boolean isFinished(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    // ---- start --------------------------------------------------------------------------------

    private void start(Pod pod) {
        RunningPod rp = new RunningPod();
        rp.pod = pod;
        rp.startTime = now();
        if (pod.getSpec().getInitContainers() != null) {
            pod.getSpec().getInitContainers().forEach(c -> rp.initContainers.add(new ContainerRun(c, true)));
        }
        pod.getSpec().getContainers().forEach(c -> rp.containers.add(new ContainerRun(c, false)));
        pods.put(pod.getMetadata().getUid(), rp);
        boolean imagesKnown = true;
        for (ContainerRun c : rp.all()) {
            if (images.commandLine(c.spec).isEmpty()) {
                imagesKnown = false;
                c.waitingReason = "ErrImagePull";
                c.waitingMessage = "image " + c.spec.getImage() + " is not in the process kubelet's image registry";
                event(pod, "Warning", "Failed", "Failed to pull image \"" + c.spec.getImage() + "\": " + c.waitingMessage);
            }
        }
        if (imagesKnown) {
            rp.net = network.attach();
            if (partitionedNodes.contains(pod.getSpec().getNodeName())) {
                network.setLinkUp(rp.net, false);
            }
            prepareAndLaunch(rp);
        }
        postStatus(rp);
    }

    /** Sets up the volumes, then starts the containers; retries every second while a volume is not ready. */
    private void prepareAndLaunch(RunningPod rp) {
        if (pods.get(rp.pod.getMetadata().getUid()) != rp || rp.terminating
                || deadNodes.contains(rp.pod.getSpec().getNodeName())) {
            return;
        }
        try {
            rp.volumes = volumes.materialize(rp.pod, podDir(rp.pod), rp.net.ip());
        } catch (PodVolumes.NotReady | KubernetesClientException e) {
            rp.all().forEach(c -> {
                c.waitingReason = rp.initialized() || c.init ? "ContainerCreating" : "PodInitializing";
                c.waitingMessage = e.getMessage();
            });
            loop.schedule(() -> {
                prepareAndLaunch(rp);
                postStatus(rp);
            }, 1, TimeUnit.SECONDS);
            return;
        }
        writePodHosts(rp);
        launchNext(rp);
    }

    /** Starts the next init container, or, once all have completed, the pod's containers. */
    private void launchNext(RunningPod rp) {
        if (!rp.initialized()) {
            launch(rp, rp.initContainers.get(rp.initDone));
        } else {
            rp.containers.forEach(c -> launch(rp, c));
        }
    }

    /** New cluster names: every running pod's /etc/hosts is rewritten. */
    void updateHosts(String content) {
        clusterHosts = content;
        pods.values().stream().filter(rp -> rp.net != null && rp.volumes != null).forEach(this::writePodHosts);
    }

    private void writePodHosts(RunningPod rp) {
        HostsFile.writeInPlace(podDir(rp.pod).resolve("etc-hosts"), HostsFile.forPod(clusterHosts, rp.pod, rp.net.ip()));
    }

    private Path podDir(Pod pod) {
        return rootDir.resolve("pods").resolve(pod.getMetadata().getUid());
    }

    private void launch(RunningPod rp, ContainerRun c) {
        Pod pod = rp.pod;
        Map<String, String> env;
        try {
            env = environment(pod, c.spec, rp.net.ip());
        } catch (KubernetesClientException | IllegalStateException e) {
            c.waitingReason = "CreateContainerConfigError";
            c.waitingMessage = e.getMessage();
            loop.schedule(() -> relaunch(rp, c, c.generation), 2, TimeUnit.SECONDS);
            return;
        }
        Path log = logFile(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), c.name());
        Path workspace = podDir(pod).resolve("rootfs").resolve(c.name());
        List<String> command = new ArrayList<>(List.of("setsid"));
        command.addAll(PodNetwork.inNetns(rp.net));
        command.addAll(List.of("unshare", "--mount", "--uts", "--propagation", "private",
                "/bin/sh", "-c", containerInit(rp, c, workspace), "container-init"));
        images.commandLine(c.spec).orElseThrow().forEach(arg -> command.add(expand(arg, env)));
        try {
            Files.createDirectories(log.getParent());
            Files.createDirectories(workspace);
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            Map<String, String> processEnv = pb.environment();
            processEnv.keySet().retainAll(HOST_ENV_KEPT);
            processEnv.put("HOSTNAME", pod.getMetadata().getName());
            // In-cluster clients find the API server through these (the forwarder on the bridge).
            processEnv.put("KUBERNETES_SERVICE_HOST", PodNetwork.GATEWAY);
            processEnv.put("KUBERNETES_SERVICE_PORT", Integer.toString(ApiServerForwarder.PORT));
            processEnv.put("KUBERNETES_SERVICE_PORT_HTTPS", Integer.toString(ApiServerForwarder.PORT));
            processEnv.put("KUBERNETES_PORT", "tcp://" + PodNetwork.GATEWAY + ":" + ApiServerForwarder.PORT);
            processEnv.putAll(env);
            pb.directory(workspace.toFile());
            Process process = pb.start();
            c.process = process;
            c.generation++;
            c.startedAt = now();
            c.waitingReason = null;
            c.waitingMessage = null;
            c.ready = c.spec.getReadinessProbe() == null;
            c.livenessFailures = 0;
            c.readinessFailures = 0;
            c.startupFailures = 0;
            c.startupDone = c.spec.getStartupProbe() == null;
            int generation = c.generation;
            process.onExit().thenRun(() -> loop.execute(() -> onExit(rp, c, process)));
            if (c.startupDone) {
                startProbes(rp, c, generation);
            } else {
                scheduleProbe(rp, c, generation, c.spec.getStartupProbe(), ProbeKind.STARTUP, true);
            }
        } catch (IOException e) {
            c.waitingReason = "RunContainerError";
            c.waitingMessage = e.getMessage();
        }
    }

    /**
     * The shell script that gives a container its view of the files, run as root in the pod's
     * network namespace and a fresh mount and UTS namespace: an overlay of the host's root with a
     * tmpfs upper layer (so writes stay private and vanish with the container), /dev, /proc, /sys,
     * the pod's hosts file as /etc/hosts, a resolv.conf whose only nameserver is the pod's own
     * loopback (no DNS server: names come from /etc/hosts, others fail at once), each volumeMount bind-mounted (read-only if asked), the
     * root made read-only if the container's securityContext asks ({@code readOnlyRootFilesystem}), the
     * pod's hostname; then chroot into it and exec the command. The mounts live only as long as the
     * namespace's processes, so nothing is left mounted when the container exits.
     */
    private String containerInit(RunningPod rp, ContainerRun c, Path workspace) {
        StringBuilder script = new StringBuilder("set -e\n");
        script.append("W=").append(quote(workspace.toString())).append("\n");
        script.append("""
                mount -t tmpfs -o mode=755 tmpfs "$W"
                mkdir "$W/upper" "$W/work" "$W/root"
                mount -t overlay overlay -o lowerdir=/,upperdir="$W/upper",workdir="$W/work" "$W/root"
                R="$W/root"
                mount --rbind /dev "$R/dev"
                mount -t proc proc "$R/proc"
                mount --rbind /sys "$R/sys"
                """);
        script.append("mount --bind ").append(quote(podDir(rp.pod).resolve("etc-hosts").toString()))
                .append(" \"$R/etc/hosts\"\n");
        script.append("mount --bind ").append(quote(resolvConf.toString())).append(" \"$R/etc/resolv.conf\"\n");
        if (c.spec.getVolumeMounts() != null) {
            for (var mount : c.spec.getVolumeMounts()) {
                Path source = rp.volumes.get(mount.getName());
                if (source == null) {
                    throw new IllegalStateException("volumeMount " + mount.getName() + " names no volume of the pod");
                }
                if (mount.getSubPath() != null && !mount.getSubPath().isEmpty()) {
                    source = source.resolve(mount.getSubPath());
                }
                // The target is resolved inside the new root: an absolute symlink on the way (as
                // /var/run -> /run) must lead into the root, not to the host's directory.
                script.append("S=").append(quote(source.toString())).append("; T=\"$R$(chroot \"$R\" realpath -m ")
                        .append(quote(mount.getMountPath())).append(")\"\n");
                script.append("""
                        if [ -d "$S" ] || [ ! -e "$S" ]; then mkdir -p "$S" "$T"; else mkdir -p "$(dirname "$T")"; touch "$T"; fi
                        mount --bind "$S" "$T"
                        """);
                if (Boolean.TRUE.equals(mount.getReadOnly())) {
                    script.append("mount -o remount,bind,ro \"$T\"\n");
                }
            }
        }
        if (c.spec.getSecurityContext() != null
                && Boolean.TRUE.equals(c.spec.getSecurityContext().getReadOnlyRootFilesystem())) {
            // readOnlyRootFilesystem: the container's own overlay is remounted read-only; its volumes,
            // /dev, /proc, /sys and /etc/hosts are mounts of their own and keep their modes
            script.append("mount -o remount,bind,ro \"$R\"\n");
        }
        String hostname = rp.pod.getSpec().getHostname() != null ? rp.pod.getSpec().getHostname()
                : rp.pod.getMetadata().getName();
        script.append("hostname ").append(quote(hostname)).append("\n");
        String workingDir = c.spec.getWorkingDir() != null ? c.spec.getWorkingDir() : "/";
        script.append("exec chroot \"$R\" /bin/sh -c 'cd \"$1\" || exit 1; shift; exec \"$@\"' chroot-init ")
                .append(quote(workingDir)).append(" \"$@\"\n");
        return script.toString();
    }

    /** Single-quotes a string for /bin/sh. */
    static String quote(String value) {
        return "'" + value.replace("'", "'\\''") + "'";
    }

    private void relaunch(RunningPod rp, ContainerRun c, int generation) {
        if (pods.get(rp.pod.getMetadata().getUid()) != rp || rp.terminating || c.generation != generation
                || deadNodes.contains(rp.pod.getSpec().getNodeName())) {
            return;
        }
        if (c.restartCount > 0) {
            event(rp.pod, "Normal", "Started", "Restarted container " + c.name());
        }
        launch(rp, c);
        postStatus(rp);
    }

    // ---- exits, restarts, deletion ------------------------------------------------------------

    private void onExit(RunningPod rp, ContainerRun c, Process process) {
        if (c.process != process) {
            return;
        }
        c.process = null;
        c.ready = false;
        c.lastExitCode = process.exitValue();
        c.lastStartedAt = c.startedAt;
        c.lastFinishedAt = now();
        if (pods.get(rp.pod.getMetadata().getUid()) != rp) {
            return;
        }
        if (rp.terminating) {
            if (rp.all().stream().noneMatch(ContainerRun::running)) {
                finish(rp);
            }
            return;
        }
        String policy = Optional.ofNullable(rp.pod.getSpec().getRestartPolicy()).orElse("Always");
        if (c.init) {
            if (c.lastExitCode == 0) {
                c.finished = true;
                rp.initDone++;
                launchNext(rp);
            } else if (policy.equals("Never")) {
                c.finished = true;
                rp.finalPhase = "Failed";
                releaseNetwork(rp);
            } else {
                scheduleRestart(rp, c);
            }
            postStatus(rp);
            return;
        }
        boolean restart = policy.equals("Always") || (policy.equals("OnFailure") && c.lastExitCode != 0);
        if (restart) {
            scheduleRestart(rp, c);
        } else {
            c.finished = true;
            if (rp.containers.stream().allMatch(x -> x.finished)) {
                rp.finalPhase = rp.containers.stream().allMatch(x -> x.lastExitCode == 0) ? "Succeeded" : "Failed";
                releaseNetwork(rp);
            }
        }
        postStatus(rp);
    }

    private void scheduleRestart(RunningPod rp, ContainerRun c) {
        c.restartCount++;
        long backoffMs = Math.min(MAX_BACKOFF.toMillis(), 1000L << Math.min(10, c.restartCount - 1));
        c.waitingReason = c.restartCount > 1 ? "CrashLoopBackOff" : "ContainerCreating";
        c.waitingMessage = "back-off " + backoffMs + "ms restarting failed container " + c.name();
        int generation = c.generation;
        loop.schedule(() -> relaunch(rp, c, generation), backoffMs, TimeUnit.MILLISECONDS);
    }

    private void terminate(RunningPod rp, Duration grace) {
        rp.terminating = true;
        if (rp.all().stream().noneMatch(ContainerRun::running)) {
            finish(rp);
            return;
        }
        rp.all().forEach(c -> stopGracefully(rp, c, grace));
        loop.schedule(() -> {
            if (pods.get(rp.pod.getMetadata().getUid()) == rp) {
                rp.all().forEach(c -> signal(c, "KILL"));
            }
        }, grace.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Runs the container's preStop exec hook (if any, within the grace period), then sends SIGTERM. */
    private void stopGracefully(RunningPod rp, ContainerRun c, Duration grace) {
        var lifecycle = c.spec.getLifecycle();
        if (!c.running() || lifecycle == null || lifecycle.getPreStop() == null || lifecycle.getPreStop().getExec() == null) {
            signal(c, "TERM");
            return;
        }
        long pid = c.process.pid();
        List<String> hook = lifecycle.getPreStop().getExec().getCommand();
        probes.execute(() -> {
            try {
                execInContainer(pid, hook, (int) grace.toMillis());
            } catch (IOException e) {
                System.err.printf("process-kubelet: preStop hook of %s failed: %s%n", c.name(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            loop.execute(() -> signal(c, "TERM"));
        });
    }

    /** All containers of a terminating pod have exited: release it and delete the pod for good. */
    private void finish(RunningPod rp) {
        pods.remove(rp.pod.getMetadata().getUid());
        releaseNetwork(rp);
        finalDelete(rp.pod);
    }

    private void finalDelete(Pod pod) {
        try {
            client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                    .withGracePeriod(0).delete();
        } catch (KubernetesClientException e) {
            System.err.printf("process-kubelet: final delete of %s failed: %s%n", pod.getMetadata().getName(), e);
        }
    }

    /** Releases the pod's network namespace and deletes its directory (volumes, root workspaces). */
    private void releaseNetwork(RunningPod rp) {
        if (rp.net != null) {
            network.detach(rp.net);
            rp.net = null;
        }
        deleteTree(podDir(rp.pod));
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            System.err.printf("process-kubelet: could not delete %s: %s%n", dir, e);
        }
    }

    /**
     * Signals a container as a container runtime does: TERM goes to its main process (PID 1 of a
     * container), KILL to its whole process group (setsid made the main process the leader).
     */
    private static void signal(ContainerRun c, String signal) {
        Process p = c.process;
        if (p == null || !p.isAlive()) {
            return;
        }
        String target = signal.equals("KILL") ? "-" + p.pid() : Long.toString(p.pid());
        try {
            new ProcessBuilder("kill", "-" + signal, "--", target).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (signal.equals("KILL")) {
            p.destroyForcibly();
        }
    }

    // ---- probes -------------------------------------------------------------------------------

    private enum ProbeKind { STARTUP, READINESS, LIVENESS }

    private void startProbes(RunningPod rp, ContainerRun c, int generation) {
        scheduleProbe(rp, c, generation, c.spec.getReadinessProbe(), ProbeKind.READINESS, true);
        scheduleProbe(rp, c, generation, c.spec.getLivenessProbe(), ProbeKind.LIVENESS, true);
    }

    private void scheduleProbe(RunningPod rp, ContainerRun c, int generation, Probe probe, ProbeKind kind,
                               boolean first) {
        if (probe == null) {
            return;
        }
        int delay = first ? orDefault(probe.getInitialDelaySeconds(), 0) : orDefault(probe.getPeriodSeconds(), 10);
        loop.schedule(() -> {
            if (c.generation != generation || !c.running() || pods.get(rp.pod.getMetadata().getUid()) != rp) {
                return;
            }
            String ip = rp.net == null ? null : rp.net.ip();
            long pid = c.process.pid();
            probes.execute(() -> {
                boolean ok = probe(probe, c.spec, ip, pid);
                loop.execute(() -> onProbe(rp, c, generation, probe, kind, ok));
            });
        }, Math.max(delay, 0) * 1000L + (first ? 200 : 0), TimeUnit.MILLISECONDS);
    }

    private void onProbe(RunningPod rp, ContainerRun c, int generation, Probe probe, ProbeKind kind, boolean ok) {
        if (c.generation != generation || !c.running()) {
            return;
        }
        if (kind == ProbeKind.STARTUP) {
            if (ok) {
                c.startupDone = true;
                postStatus(rp);
                startProbes(rp, c, generation);
                return;
            }
            if (++c.startupFailures >= orDefault(probe.getFailureThreshold(), 3)) {
                event(rp.pod, "Normal", "Killing", "Container " + c.name() + " failed startup probe, will be restarted");
                signal(c, "KILL");
                return;
            }
        } else if (kind == ProbeKind.READINESS) {
            c.readinessFailures = ok ? 0 : c.readinessFailures + 1;
            boolean ready = ok || (c.ready && c.readinessFailures < orDefault(probe.getFailureThreshold(), 3));
            if (ready != c.ready) {
                c.ready = ready;
                postStatus(rp);
            }
        } else {
            c.livenessFailures = ok ? 0 : c.livenessFailures + 1;
            if (c.livenessFailures >= orDefault(probe.getFailureThreshold(), 3)) {
                event(rp.pod, "Normal", "Killing", "Container " + c.name() + " failed liveness probe, will be restarted");
                signal(c, "KILL");
                return;
            }
        }
        scheduleProbe(rp, c, generation, probe, kind, false);
    }

    private boolean probe(Probe probe, Container container, String ip, long pid) {
        int timeoutMs = orDefault(probe.getTimeoutSeconds(), 1) * 1000;
        try {
            if (probe.getTcpSocket() != null) {
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress(ip, port(container, probe.getTcpSocket().getPort())), timeoutMs);
                    return true;
                }
            }
            if (probe.getHttpGet() != null) {
                String path = Optional.ofNullable(probe.getHttpGet().getPath()).orElse("/");
                String scheme = Optional.ofNullable(probe.getHttpGet().getScheme()).orElse("HTTP").toLowerCase();
                HttpResponse<Void> response = http.send(HttpRequest.newBuilder(URI.create(scheme + "://" + ip + ":"
                                + port(container, probe.getHttpGet().getPort()) + path))
                        .timeout(Duration.ofMillis(timeoutMs)).GET().build(), HttpResponse.BodyHandlers.discarding());
                return response.statusCode() >= 200 && response.statusCode() < 400;
            }
            if (probe.getExec() != null) {
                return execInContainer(pid, probe.getExec().getCommand(), timeoutMs);
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Runs a command inside a running container: its network, mount and UTS namespaces, its root
     * and working directory (nsenter into the main process). True if it exits 0 in time.
     */
    private static boolean execInContainer(long pid, List<String> command, int timeoutMs)
            throws IOException, InterruptedException {
        List<String> line = new ArrayList<>(List.of("nsenter", "--target", Long.toString(pid), "--net", "--mount",
                "--uts", "--root", "--wd"));
        line.addAll(command);
        Process p = new ProcessBuilder(line).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            return false;
        }
        return p.exitValue() == 0;
    }

    private static int port(Container container, IntOrString port) {
        if (port.getIntVal() != null) {
            return port.getIntVal();
        }
        return container.getPorts().stream().filter(p -> port.getStrVal().equals(p.getName()))
                .map(ContainerPort::getContainerPort).findFirst()
                .orElseThrow(() -> new IllegalStateException("no container port named " + port.getStrVal()));
    }

    private static int orDefault(Integer value, int fallback) {
        return value == null ? fallback : value;
    }

    // ---- environment --------------------------------------------------------------------------

    private Map<String, String> environment(Pod pod, Container container, String podIp) {
        Map<String, String> env = new LinkedHashMap<>();
        String ns = pod.getMetadata().getNamespace();
        if (container.getEnvFrom() != null) {
            for (EnvFromSource from : container.getEnvFrom()) {
                String prefix = Optional.ofNullable(from.getPrefix()).orElse("");
                if (from.getConfigMapRef() != null) {
                    ConfigMap cm = client.configMaps().inNamespace(ns).withName(from.getConfigMapRef().getName()).get();
                    if (cm == null && !Boolean.TRUE.equals(from.getConfigMapRef().getOptional())) {
                        throw new IllegalStateException("configmap \"" + from.getConfigMapRef().getName() + "\" not found");
                    }
                    if (cm != null && cm.getData() != null) {
                        cm.getData().forEach((k, v) -> env.put(prefix + k, v));
                    }
                }
                if (from.getSecretRef() != null) {
                    Secret secret = client.secrets().inNamespace(ns).withName(from.getSecretRef().getName()).get();
                    if (secret == null && !Boolean.TRUE.equals(from.getSecretRef().getOptional())) {
                        throw new IllegalStateException("secret \"" + from.getSecretRef().getName() + "\" not found");
                    }
                    if (secret != null) {
                        secretData(secret).forEach((k, v) -> env.put(prefix + k, v));
                    }
                }
            }
        }
        if (container.getEnv() != null) {
            for (EnvVar var : container.getEnv()) {
                String value = value(pod, var, podIp, env);
                if (value != null) {
                    env.put(var.getName(), value);
                }
            }
        }
        return env;
    }

    private String value(Pod pod, EnvVar var, String podIp, Map<String, String> defined) {
        if (var.getValueFrom() == null) {
            return var.getValue() == null ? "" : expand(var.getValue(), defined);
        }
        var from = var.getValueFrom();
        String ns = pod.getMetadata().getNamespace();
        if (from.getFieldRef() != null) {
            String path = from.getFieldRef().getFieldPath();
            return switch (path) {
                case "metadata.name" -> pod.getMetadata().getName();
                case "metadata.namespace" -> ns;
                case "metadata.uid" -> pod.getMetadata().getUid();
                case "spec.nodeName" -> pod.getSpec().getNodeName();
                case "spec.serviceAccountName" -> pod.getSpec().getServiceAccountName();
                case "status.podIP" -> podIp;
                case "status.hostIP" -> hostIps.get(pod.getSpec().getNodeName());
                default -> mapField(pod, path);
            };
        }
        if (from.getConfigMapKeyRef() != null) {
            var ref = from.getConfigMapKeyRef();
            ConfigMap cm = client.configMaps().inNamespace(ns).withName(ref.getName()).get();
            String value = cm == null || cm.getData() == null ? null : cm.getData().get(ref.getKey());
            if (value == null && !Boolean.TRUE.equals(ref.getOptional())) {
                throw new IllegalStateException("configmap \"" + ref.getName() + "\" has no key \"" + ref.getKey() + "\"");
            }
            return value;
        }
        if (from.getSecretKeyRef() != null) {
            var ref = from.getSecretKeyRef();
            Secret secret = client.secrets().inNamespace(ns).withName(ref.getName()).get();
            String value = secret == null ? null : secretData(secret).get(ref.getKey());
            if (value == null && !Boolean.TRUE.equals(ref.getOptional())) {
                throw new IllegalStateException("secret \"" + ref.getName() + "\" has no key \"" + ref.getKey() + "\"");
            }
            return value;
        }
        return "";
    }

    private static String mapField(Pod pod, String path) {
        Matcher m = Pattern.compile("metadata\\.(labels|annotations)\\['(.*)'\\]").matcher(path);
        if (!m.matches()) {
            throw new IllegalStateException("fieldRef " + path + " is not supported by the process kubelet");
        }
        Map<String, String> map = m.group(1).equals("labels") ? pod.getMetadata().getLabels()
                : pod.getMetadata().getAnnotations();
        return map == null ? "" : map.getOrDefault(m.group(2), "");
    }

    private static Map<String, String> secretData(Secret secret) {
        Map<String, String> data = new HashMap<>();
        if (secret.getData() != null) {
            secret.getData().forEach((k, v) -> data.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
        }
        if (secret.getStringData() != null) {
            data.putAll(secret.getStringData());
        }
        return data;
    }

    /** Kubernetes' $(VAR) expansion: defined variables are substituted, $$ escapes, others stay. */
    static String expand(String value, Map<String, String> env) {
        Matcher m = VAR_REF.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String replacement = m.group(1) == null ? "$" : env.getOrDefault(m.group(1), m.group());
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(out);
        return out.toString();
    }

    // ---- status -------------------------------------------------------------------------------

    private void postStatus(RunningPod rp) {
        Pod pod = rp.pod;
        String now = now();
        boolean allReady = rp.containers.stream().allMatch(c -> c.ready && c.startupDone && c.running());
        boolean anyStarted = rp.containers.stream().anyMatch(c -> c.startedAt != null);
        String phase = rp.finalPhase != null ? rp.finalPhase : rp.initialized() && anyStarted ? "Running" : "Pending";
        String hostIp = hostIps.get(pod.getSpec().getNodeName());
        PodStatusBuilder status = new PodStatusBuilder()
                .withPhase(phase)
                .withHostIP(hostIp).addNewHostIP(hostIp)
                .withStartTime(rp.startTime)
                // the API server sets the QoS class at creation and refuses to change it (422): keep it
                .withQosClass(pod.getStatus() == null ? null : pod.getStatus().getQosClass())
                .withConditions(
                        condition("PodReadyToStartContainers", rp.net != null, now),
                        condition("Initialized", rp.initialized(), now),
                        condition("ContainersReady", allReady, now),
                        condition("Ready", allReady, now),
                        condition("PodScheduled", true, now))
                .withInitContainerStatuses(rp.initContainers.stream().map(this::containerStatus).toList())
                .withContainerStatuses(rp.containers.stream().map(this::containerStatus).toList());
        if (rp.net != null) {
            status.withPodIP(rp.net.ip()).addNewPodIP(rp.net.ip());
        }
        PodStatus built = status.build();
        // The patch names the pod's uid, which the API server checks: a pod deleted and created again
        // under the same name (a StatefulSet's) is another pod, and the old one's late status (its IP,
        // merged into podIPs by the strategic merge) must not land on it, as a real kubelet's does not.
        try {
            client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                    .subresource("status")
                    .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), new PodBuilder()
                            .withNewMetadata().withUid(pod.getMetadata().getUid()).endMetadata()
                            .withStatus(built).build());
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409 || e.getCode() == 422) {
                System.err.printf("process-kubelet: status of %s (uid %s) not posted: %d %s%n",
                        pod.getMetadata().getName(), pod.getMetadata().getUid(), e.getCode(),
                        e.getStatus() == null ? e.getMessage() : e.getStatus().getMessage());
            } else if (e.getCode() != 404) {
                System.err.printf("process-kubelet: status of %s not posted: %s%n", pod.getMetadata().getName(), e);
            }
        }
    }

    private ContainerStatus containerStatus(ContainerRun c) {
        ContainerState state;
        if (c.running()) {
            state = new ContainerStateBuilder().withNewRunning().withStartedAt(c.startedAt).endRunning().build();
        } else if (c.finished) {
            state = terminated(c);
        } else {
            state = new ContainerStateBuilder().withNewWaiting()
                    .withReason(Optional.ofNullable(c.waitingReason).orElse("ContainerCreating"))
                    .withMessage(c.waitingMessage).endWaiting().build();
        }
        ContainerStatusBuilder status = new ContainerStatusBuilder()
                .withName(c.name()).withImage(c.spec.getImage()).withImageID("process://" + c.spec.getImage())
                .withReady(c.init ? c.finished && c.lastExitCode == 0 : c.ready && c.running())
                .withStarted(c.running() && c.startupDone).withRestartCount(c.restartCount)
                .withState(state);
        if (c.running()) {
            status.withContainerID("process://" + c.process.pid());
        }
        if (c.lastExitCode != null && !c.finished) {
            status.withLastState(terminated(c));
        }
        return status.build();
    }

    private static ContainerState terminated(ContainerRun c) {
        return new ContainerStateBuilder().withNewTerminated().withExitCode(c.lastExitCode)
                .withReason(c.lastExitCode == 0 ? "Completed" : "Error")
                .withStartedAt(c.lastStartedAt).withFinishedAt(c.lastFinishedAt).endTerminated().build();
    }

    private static PodCondition condition(String type, boolean value, String now) {
        return new PodConditionBuilder().withType(type).withStatus(value ? "True" : "False")
                .withLastTransitionTime(now).build();
    }

    private void event(Pod pod, String type, String reason, String message) {
        String now = now();
        try {
            client.v1().events().inNamespace(pod.getMetadata().getNamespace()).resource(new EventBuilder()
                    .withNewMetadata().withGenerateName(pod.getMetadata().getName() + ".").endMetadata()
                    .withNewInvolvedObject().withKind("Pod").withApiVersion("v1")
                    .withNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                    .withUid(pod.getMetadata().getUid()).endInvolvedObject()
                    .withType(type).withReason(reason).withMessage(message)
                    .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                    .withNewSource().withComponent("process-kubelet").withHost(pod.getSpec().getNodeName()).endSource()
                    .build()).create();
        } catch (KubernetesClientException e) {
            System.err.printf("process-kubelet: event for %s not recorded: %s%n", pod.getMetadata().getName(), e);
        }
    }

    private String now() {
        return Instant.ofEpochMilli(clock.millis()).toString().replaceAll("\\.\\d+Z$", "Z");
    }
}
