package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The process kubelet: test support that plays the kubelets of several nodes against a real
 * control plane: it registers the nodes (zone labels, Leases in {@code kube-node-lease}, Ready
 * status) so the scheduler binds pods to them, runs the pods bound to them as processes in their
 * own network namespaces ({@link PodRuntime}), and injects node loss.
 *
 * <p>One thread owns all node state: every public method hands its work to that loop and waits for
 * it. Nothing starts before {@link #start()}; {@link #close()} (or, failing that, a JVM shutdown
 * hook) kills every pod process, removes every network namespace and the bridge, and deletes the
 * nodes.
 */
public final class ProcessKubelet implements AutoCloseable {

    /** How often Leases are renewed; well inside the 8 s node-monitor grace period of e2e/cluster. */
    static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(2);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    /**
     * One kubelet at a time per machine-wide network (bridge, netns names, pod IPs, the API
     * forwarder's port): a second start fails instead of tearing down the first one's pods.
     */
    private static final AtomicBoolean RUNNING = new AtomicBoolean();

    private final KubernetesClient client;
    private final Clock clock;
    private final Map<String, NodeAgent> nodes = new LinkedHashMap<>();
    private final ImageRegistry images;
    private final Path logDir;
    private final Path rootDir;
    private final PodNetwork network = new PodNetwork();
    private final Set<String> deadNodes = new HashSet<>();
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private HostsFile hosts;
    private LocalPathProvisioner provisioner;
    private SharedIndexInformer<Service> services;
    private SharedIndexInformer<EndpointSlice> slices;
    private boolean hostsDirty;
    private ApiServerForwarder forwarder;
    private ScheduledExecutorService loop;
    private ExecutorService probes;
    private PodRuntime runtime;
    private SharedIndexInformer<Pod> informer;
    private Thread shutdownHook;

    private ProcessKubelet(Builder builder) {
        this.client = builder.client;
        this.clock = builder.clock;
        this.images = builder.images;
        this.logDir = builder.logDir.toAbsolutePath();
        this.rootDir = builder.rootDir.toAbsolutePath();
        for (int i = 1; i <= builder.nodeCount; i++) {
            String name = builder.namePrefix + i;
            String zone = "zone-" + (char) ('a' + (i - 1) % builder.zoneCount);
            nodes.put(name, new NodeAgent(client, name, zone, PodNetwork.GATEWAY, builder.kubeletVersion));
        }
    }

    public static Builder builder(KubernetesClient client) {
        return new Builder(client);
    }

    /** Registers every node, starts the heartbeat loop and runs the pods bound to the nodes. */
    public ProcessKubelet start() {
        if (!RUNNING.compareAndSet(false, true)) {
            throw new IllegalStateException("another ProcessKubelet is running in this JVM; close it first");
        }
        try {
            startLoopNodesAndInformers();
        } catch (RuntimeException e) {
            // Undo whatever started: processes, namespaces, nodes.
            close();
            RUNNING.set(false);
            throw e;
        }
        return this;
    }

    private void startLoopNodesAndInformers() {
        loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "process-kubelet");
            t.setDaemon(true);
            return t;
        });
        probes = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "process-kubelet-probe");
            t.setDaemon(true);
            return t;
        });
        Map<String, String> hostIps = new LinkedHashMap<>();
        nodes.values().forEach(node -> hostIps.put(node.name(), node.address()));
        hosts = new HostsFile(rootDir.resolve("hosts"));
        runtime = new PodRuntime(client, images, network, logDir, rootDir, rootDir.resolve("resolv.conf"), clock, loop,
                probes, hostIps, deadNodes);
        provisioner = new LocalPathProvisioner(client, rootDir, hostIps.keySet(), deadNodes);
        shutdownHook = new Thread(this::close, "process-kubelet-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        call(() -> {
            // Whatever a killed earlier run left behind goes first.
            PodNetwork.reapAll();
            network.ensureBridge();
            try {
                forwarder = ApiServerForwarder.start(client.getConfiguration().getMasterUrl());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot forward " + PodNetwork.GATEWAY + ":443 to the API server", e);
            }
            runtime.updateHosts(hosts.writeInitial());
            HostsFile.writeInPlace(rootDir.resolve("resolv.conf"),
                    "# No DNS server: cluster names are in /etc/hosts.\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
            provisioner.installStorageClass();
            long now = clock.millis();
            nodes.values().forEach(node -> node.register(now));
            return null;
        });
        services = inform(client.services().inAnyNamespace().inform(handler(s -> markHostsDirty(), s -> markHostsDirty()), 0));
        slices = inform(client.discovery().v1().endpointSlices().inAnyNamespace()
                .inform(handler(s -> markHostsDirty(), s -> markHostsDirty()), 0));
        inform(client.persistentVolumeClaims().inAnyNamespace().inform(handler(provisioner::onClaim, c -> { }), 30_000));
        inform(client.persistentVolumes().inform(handler(provisioner::onVolume, v -> { }), 30_000));
        informer = inform(client.pods().inAnyNamespace().inform(handler(pod -> {
            runtime.sync(pod);
            markHostsDirty();
        }, pod -> {
            runtime.forget(pod);
            markHostsDirty();
        }), 30_000));
        loop.scheduleWithFixedDelay(this::heartbeat, HEARTBEAT_INTERVAL.toMillis(), HEARTBEAT_INTERVAL.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private <T> SharedIndexInformer<T> inform(SharedIndexInformer<T> informer) {
        informers.add(informer);
        return informer;
    }

    /** An informer handler that hands every event to the loop thread. */
    private <T> ResourceEventHandler<T> handler(Consumer<T> onChange, Consumer<T> onDelete) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                onLoop(() -> onChange.accept(object));
            }

            @Override
            public void onUpdate(T oldObject, T object) {
                onLoop(() -> onChange.accept(object));
            }

            @Override
            public void onDelete(T object, boolean finalStateUnknown) {
                onLoop(() -> onDelete.accept(object));
            }
        };
    }

    private void onLoop(Runnable work) {
        ScheduledExecutorService current = loop;
        if (current == null || current.isShutdown()) {
            return;
        }
        current.execute(() -> {
            try {
                work.run();
            } catch (RuntimeException e) {
                System.err.printf("process-kubelet: %s%n", e);
            }
        });
    }

    /** Rewrites the hosts file soon, once for a burst of changes. */
    private void markHostsDirty() {
        if (hostsDirty) {
            return;
        }
        hostsDirty = true;
        loop.schedule(() -> {
            hostsDirty = false;
            if (informer != null && services != null && slices != null) {
                String content = hosts.update(informer.getStore(), services.getStore(), slices.getStore());
                if (content != null) {
                    runtime.updateHosts(content);
                }
            }
        }, 100, TimeUnit.MILLISECONDS);
    }

    private void heartbeat() {
        long now = clock.millis();
        for (NodeAgent node : nodes.values()) {
            try {
                node.heartbeat(now);
            } catch (RuntimeException e) {
                // The API server may be briefly unavailable; the next heartbeat tries again.
                System.err.printf("process-kubelet: heartbeat of %s failed: %s%n", node.name(), e);
            }
        }
    }

    /** Node names, in registration order. */
    /** The first two octets and dot of this kubelet's pod IPs, e.g. {@code 10.213.}. */
    public static String podSubnetPrefix() {
        return PodNetwork.SUBNET;
    }

    public List<String> nodeNames() {
        return new ArrayList<>(nodes.keySet());
    }

    /** The zone label of a node. */
    public String zoneOf(String node) {
        return agent(node).zone();
    }

    /**
     * Fault: the node loses power. It stops renewing its Lease and posting status, its pods'
     * processes are killed and their network is cut; the API still shows them as they were.
     */
    public void loseNode(String node) {
        NodeAgent agent = agent(node);
        call(() -> {
            agent.lose();
            deadNodes.add(node);
            runtime.killNode(node);
            return null;
        });
    }

    /**
     * The lost node comes back and reports Ready again; its kubelet finishes the deletion of pods
     * deleted meanwhile and starts the others afresh.
     */
    public void restoreNode(String node) {
        NodeAgent agent = agent(node);
        call(() -> {
            if (!agent.heartbeating()) {
                agent.restore(clock.millis());
                deadNodes.remove(node);
                runtime.reviveNode(node);
            }
            return null;
        });
    }

    /**
     * Fault: the node's pods are cut off the network (from each other, from the test JVM, from
     * everything), while the node stays Ready and keeps reporting them. Combine with
     * {@link #loseNode} for a node cut off from the control plane too.
     */
    public void partitionNode(String node) {
        agent(node);
        call(() -> {
            runtime.partition(node, true);
            return null;
        });
    }

    /** Heals {@link #partitionNode}. */
    public void healNode(String node) {
        agent(node);
        call(() -> {
            runtime.partition(node, false);
            return null;
        });
    }

    /**
     * Fault: the node is lost ({@link #loseNode}) and its Node object deleted, as when a cloud
     * machine is removed. The pod garbage collector then deletes its pods (after its quarantine of
     * about 40 s); {@link #restoreNode} registers the node again.
     */
    public void deleteNode(String node) {
        loseNode(node);
        NodeAgent agent = agent(node);
        call(() -> {
            agent.delete();
            return null;
        });
    }

    /** The file holding a container's stdout and stderr (all its restarts). */
    public Path logFile(String namespace, String pod, String container) {
        return runtime.logFile(namespace, pod, container);
    }

    /** A container's output so far, or "" if it has none yet. */
    public String log(String namespace, String pod, String container) {
        Path file = logFile(namespace, pod, container);
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private NodeAgent agent(String node) {
        NodeAgent agent = nodes.get(node);
        if (agent == null) {
            throw new IllegalArgumentException("no node " + node + " in this kubelet; nodes: " + nodes.keySet());
        }
        return agent;
    }

    private <T> T call(Callable<T> work) {
        try {
            return loop.submit(work).get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("process kubelet did not answer within " + CALL_TIMEOUT, e);
        }
    }

    /**
     * Kills every pod process, removes every network namespace and the bridge, stops heartbeats and
     * deletes the nodes (with their Leases). Safe to call twice.
     */
    @Override
    public synchronized void close() {
        if (loop == null) {
            return;
        }
        try {
            informers.forEach(SharedIndexInformer::close);
            call(() -> {
                runtime.shutdown();
                if (forwarder != null) {
                    forwarder.close();
                }
                PodNetwork.reapAll();
                try {
                    nodes.values().forEach(NodeAgent::delete);
                } catch (RuntimeException e) {
                    // The control plane may already be gone (JVM shutdown): the nodes go with it.
                    System.err.printf("process-kubelet: nodes not deleted: %s%n", e);
                }
                return null;
            });
        } finally {
            loop.shutdownNow();
            probes.shutdownNow();
            loop = null;
            RUNNING.set(false);
            if (Thread.currentThread() != shutdownHook) {
                try {
                    Runtime.getRuntime().removeShutdownHook(shutdownHook);
                } catch (IllegalStateException shuttingDown) {
                    // The hooks are running; this close is one of them or ran before them.
                }
            }
        }
    }

    /** Options of a {@link ProcessKubelet}. */
    public static final class Builder {
        private final KubernetesClient client;
        private Clock clock = Clock.systemUTC();
        private int nodeCount = 3;
        private int zoneCount = 3;
        private String namePrefix = "node-";
        private String kubeletVersion = "v0.0.0-process-kubelet";
        private ImageRegistry images = ImageRegistry.withDefaults();
        private Path logDir = Path.of(System.getProperty("skein.e2e.podLogs", "target/e2e-pod-logs"));
        private Path rootDir = Path.of(System.getProperty("skein.e2e.kubeletDir", "target/e2e-kubelet"));

        private Builder(KubernetesClient client) {
            this.client = client;
        }

        /** Number of nodes (default 3). */
        public Builder nodes(int count) {
            this.nodeCount = count;
            return this;
        }

        /** Number of zones the nodes are spread over, round robin: zone-a, zone-b, ... (default 3). */
        public Builder zones(int count) {
            this.zoneCount = count;
            return this;
        }

        /** Node names are this prefix plus 1, 2, ... (default {@code node-}). */
        public Builder namePrefix(String prefix) {
            this.namePrefix = prefix;
            return this;
        }

        /** The clock heartbeats are stamped with (the control plane runs on real time). */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** The kubelet version reported in the node info. */
        public Builder kubeletVersion(String version) {
            this.kubeletVersion = version;
            return this;
        }

        /** The images pods may use (default: {@link ImageRegistry#withDefaults()}). */
        public Builder images(ImageRegistry registry) {
            this.images = registry;
            return this;
        }

        /** Where pod logs go: {@code <dir>/<namespace>_<pod>/<container>.log}. */
        public Builder logDir(Path dir) {
            this.logDir = dir;
            return this;
        }

        /** The kubelet's own files: pod volumes and root workspaces, per-node PV data, the hosts file. */
        public Builder rootDir(Path dir) {
            this.rootDir = dir;
            return this;
        }

        public ProcessKubelet build() {
            return new ProcessKubelet(this);
        }
    }
}
