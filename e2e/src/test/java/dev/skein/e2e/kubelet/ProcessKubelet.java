package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.client.KubernetesClient;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The process kubelet: test support that plays the kubelets of several nodes against a real
 * control plane. Today it registers the nodes (zone labels, Leases in {@code kube-node-lease},
 * Ready status) so the scheduler binds pods to them, and injects node loss; running pods as
 * processes is the next step (see e2e/README.md).
 *
 * <p>One thread owns all node state: every public method hands its work to that loop and waits for
 * it. Nothing starts before {@link #start()}; {@link #close()} stops the loop and deletes the
 * nodes.
 */
public final class ProcessKubelet implements AutoCloseable {

    /** How often Leases are renewed; well inside the 8 s node-monitor grace period of e2e/cluster. */
    static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(2);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private final KubernetesClient client;
    private final Clock clock;
    private final Map<String, NodeAgent> nodes = new LinkedHashMap<>();
    private ScheduledExecutorService loop;

    private ProcessKubelet(Builder builder) {
        this.client = builder.client;
        this.clock = builder.clock;
        for (int i = 1; i <= builder.nodeCount; i++) {
            String name = builder.namePrefix + i;
            String zone = "zone-" + (char) ('a' + (i - 1) % builder.zoneCount);
            nodes.put(name, new NodeAgent(client, name, zone, "127.0.0.1", builder.kubeletVersion));
        }
    }

    public static Builder builder(KubernetesClient client) {
        return new Builder(client);
    }

    /** Registers every node and starts the heartbeat loop. */
    public ProcessKubelet start() {
        loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "process-kubelet");
            t.setDaemon(true);
            return t;
        });
        call(() -> {
            long now = clock.millis();
            nodes.values().forEach(node -> node.register(now));
            return null;
        });
        loop.scheduleWithFixedDelay(this::heartbeat, HEARTBEAT_INTERVAL.toMillis(), HEARTBEAT_INTERVAL.toMillis(),
                TimeUnit.MILLISECONDS);
        return this;
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
    public List<String> nodeNames() {
        return new ArrayList<>(nodes.keySet());
    }

    /** The zone label of a node. */
    public String zoneOf(String node) {
        return agent(node).zone();
    }

    /** Fault: the node stops renewing its Lease and posting status, as if it lost power. */
    public void loseNode(String node) {
        NodeAgent agent = agent(node);
        call(() -> {
            agent.lose();
            return null;
        });
    }

    /** The lost node comes back and reports Ready again. */
    public void restoreNode(String node) {
        NodeAgent agent = agent(node);
        call(() -> {
            agent.restore(clock.millis());
            return null;
        });
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

    /** Stops heartbeats and deletes the nodes (with their Leases). */
    @Override
    public void close() {
        if (loop == null) {
            return;
        }
        try {
            call(() -> {
                nodes.values().forEach(NodeAgent::delete);
                return null;
            });
        } finally {
            loop.shutdownNow();
            loop = null;
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

        public ProcessKubelet build() {
            return new ProcessKubelet(this);
        }
    }
}
