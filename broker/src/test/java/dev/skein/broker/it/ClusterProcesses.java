package dev.skein.broker.it;

import dev.skein.broker.testing.FreePorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Collections;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;

/**
 * A cluster of Skein brokers, each in its own JVM and each a voter of the controller quorum, on
 * fixed ports and data dirs so a node killed with SIGKILL restarts where it left off. By default
 * every node listens on loopback; {@link #inNamespaces} puts each node in its own network namespace
 * of a {@link NamespaceNetwork}, so a test can partition the network between them.
 */
final class ClusterProcesses implements AutoCloseable {
    private final Path root;
    private final List<String> hosts;
    private final IntFunction<List<String>> launcher;
    private final int[] ports;
    private final int[] controllerPorts;
    private final Path[] propertiesFiles;
    private final Process[] processes;
    private final int[] starts;
    /** Nodes this object stopped or killed on purpose (an exit of any other started node is a failure). */
    private final boolean[] stopped;
    /** Set when the cluster failed to come up: {@link #close} then leaves the data and logs in place. */
    private volatile boolean keepDir;
    /** Kills the brokers if the test JVM itself is stopped before {@link #close} runs. */
    private final Thread killOnExit = new Thread(this::killAll, "skein-cluster-cleanup");

    ClusterProcesses(int size, Map<String, String> overrides) throws IOException {
        this("skein-cluster-", Collections.nCopies(size, "127.0.0.1"), node -> List.of(), overrides);
    }

    /** As {@link #ClusterProcesses(int, Map)}, with the data under a new temp dir named {@code dirPrefix...}. */
    ClusterProcesses(String dirPrefix, int size, Map<String, String> overrides) throws IOException {
        this(dirPrefix, Collections.nCopies(size, "127.0.0.1"), node -> List.of(), overrides);
    }

    /** One node per network namespace of {@code net}, each listening on its own address. */
    static ClusterProcesses inNamespaces(String dirPrefix, NamespaceNetwork net, Map<String, String> overrides)
            throws IOException {
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < net.size(); i++) {
            hosts.add(net.ip(i));
        }
        return new ClusterProcesses(dirPrefix, hosts, net::launcher, overrides);
    }

    /**
     * Node {@code i} listens on {@code hosts.get(i)}; its JVM is started with {@code launcher.apply(i)}
     * in front of the java command (empty: started directly).
     */
    ClusterProcesses(String dirPrefix, List<String> hosts, IntFunction<List<String>> launcher, Map<String, String> overrides)
            throws IOException {
        int size = hosts.size();
        this.hosts = List.copyOf(hosts);
        this.launcher = launcher;
        root = Files.createTempDirectory(dirPrefix);
        Runtime.getRuntime().addShutdownHook(killOnExit);
        ports = new int[size];
        controllerPorts = new int[size];
        for (int i = 0; i < size; i++) {
            ports[i] = FreePorts.pick();
            controllerPorts[i] = FreePorts.pick();
        }
        List<String> voters = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            voters.add(i + "@" + hosts.get(i) + ":" + controllerPorts[i]);
        }
        propertiesFiles = new Path[size];
        processes = new Process[size];
        starts = new int[size];
        stopped = new boolean[size];
        for (int i = 0; i < size; i++) {
            Path dir = root.resolve("node-" + i);
            Files.createDirectories(dir);
            Map<String, String> p = TestBroker.baseProperties(dir, ports[i]);
            p.put("node.id", Integer.toString(i));
            p.put("controller.quorum.voters", String.join(",", voters));
            p.put("listeners", "PLAINTEXT://" + hosts.get(i) + ":" + ports[i] + ",CONTROLLER://" + hosts.get(i) + ":"
                    + controllerPorts[i]);
            p.put("offsets.topic.replication.factor", Integer.toString(Math.min(3, size)));
            p.put("broker.rack", "rack-" + i);
            p.putAll(overrides);
            Properties props = new Properties();
            props.putAll(p);
            propertiesFiles[i] = dir.resolve("server.properties");
            try (OutputStream out = Files.newOutputStream(propertiesFiles[i])) {
                props.store(out, "ClusterProcesses node " + i);
            }
        }
    }

    int size() {
        return ports.length;
    }

    /** The node's Kafka (PLAINTEXT) port. */
    int port(int node) {
        return ports[node];
    }

    /** Starts the node's JVM without waiting (a quorum needs a majority up before anyone is ready). */
    void start(int node) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        starts[node]++;
        stopped[node] = false;
        List<String> command = new ArrayList<>(launcher.apply(node));
        command.addAll(List.of(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "dev.skein.broker.Main", propertiesFiles[node].toString()));
        processes[node] = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile(node, starts[node]).toFile()))
                .start();
    }

    void startAll() throws IOException {
        for (int i = 0; i < size(); i++) {
            start(i);
        }
    }

    /**
     * Waits until the node serves requests and sees {@code brokers} live brokers. Fails at once when a
     * node exits that was neither stopped nor killed here (it can only come back if the test restarts
     * it). A cluster that does not come up within 90 s fails with every node's log (stack frames left
     * out, so a Ratis trace does not crowd out the lines around it) and keeps its directory, with a
     * thread dump of every running node, so the whole logs outlive the test.
     */
    void awaitReady(int node, int brokers) {
        try {
            awaitReadyOnce(node, brokers);
        } catch (NodeExited e) {
            keepDir = true;
            throw new AssertionError(e.getMessage() + "; cluster dir kept: " + root + "; logs:\n" + logTails(), e);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // say why: every node's log, since the cause may be another node (no quorum, no controller)
            keepDir = true;
            for (int i = 0; i < size(); i++) {
                try {
                    Files.writeString(root.resolve("node-" + i).resolve("threads-" + starts[i] + ".txt"), threadDump(i));
                } catch (IOException io) {
                    // the logs below still say most of it
                }
            }
            throw new AssertionError("node " + node + " did not see " + brokers + " live brokers within 90 s; cluster dir"
                    + " (whole logs, thread dumps) kept: " + root + "; logs:\n" + logTails(), e);
        }
    }

    /** A node of this cluster exited without being stopped or killed by the test. */
    private static final class NodeExited extends RuntimeException {
        NodeExited(String message) {
            super(message);
        }
    }

    private void awaitReadyOnce(int node, int brokers) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                .ignoreExceptionsMatching(e -> !(e instanceof NodeExited)).until(() -> {
            for (int i = 0; i < size(); i++) {
                if (processes[i] != null && !stopped[i] && !processes[i].isAlive()) {
                    throw new NodeExited("node " + i + " exited with " + processes[i].exitValue());
                }
            }
            Admin admin = admin(List.of(node), Duration.ofSeconds(3));
            try {
                return admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).size() >= brokers;
            } finally {
                // bounded: a plain close waits for every call in flight, and one stuck call would hold this
                // poll (and the whole wait) past its deadline
                admin.close(Duration.ofSeconds(3));
            }
        });
    }

    private String logTails() {
        StringBuilder logs = new StringBuilder();
        for (int i = 0; i < size(); i++) {
            try {
                logs.append(log(i, 6000, true)).append('\n');
            } catch (IOException io) {
                logs.append("--- node ").append(i).append(": no log: ").append(io).append('\n');
            }
        }
        return logs.toString();
    }

    /** SIGKILL: no shutdown hook, no flush, no controlled shutdown. */
    void kill(int node) throws InterruptedException {
        stopped[node] = true;
        if (processes[node] != null && processes[node].isAlive()) {
            processes[node].destroyForcibly();
            processes[node].waitFor(30, TimeUnit.SECONDS);
        }
    }

    boolean isAlive(int node) {
        return processes[node] != null && processes[node].isAlive();
    }

    /** SIGTERM and wait: the broker's controlled shutdown runs. */
    void stop(int node) throws InterruptedException {
        stopped[node] = true;
        if (processes[node] != null && processes[node].isAlive()) {
            processes[node].destroy();
            if (!processes[node].waitFor(60, TimeUnit.SECONDS)) {
                processes[node].destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    String bootstrap(List<Integer> nodes) {
        return nodes.stream().map(i -> hosts.get(i) + ":" + ports[i]).collect(Collectors.joining(","));
    }

    String host(int node) {
        return hosts.get(node);
    }

    /**
     * An idempotent acks=all producer of strings that learns leadership changes within a second, as
     * the failover tests record their histories with; {@code requestTimeoutMs} bounds one request.
     */
    KafkaProducer<String, String> checkedProducer(int requestTimeoutMs) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 100);
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, 1_000);
        return new KafkaProducer<>(p);
    }

    /** A consumer of strings from the earliest offset that commits nothing, checks CRCs and learns leadership changes within a second. */
    KafkaConsumer<String, String> checkedConsumer() {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 1_000);
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, true);
        return new KafkaConsumer<>(p);
    }

    String bootstrap() {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < size(); i++) {
            all.add(i);
        }
        return bootstrap(all);
    }

    Admin admin(List<Integer> nodes, Duration timeout) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(nodes));
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), 10_000));
        return Admin.create(p);
    }

    /** The {@code controller.quorum.voters} of this cluster. */
    List<dev.skein.broker.controller.raft.QuorumVoter> controllerVoters() {
        List<dev.skein.broker.controller.raft.QuorumVoter> out = new ArrayList<>();
        for (int i = 0; i < size(); i++) {
            out.add(new dev.skein.broker.controller.raft.QuorumVoter(i, "127.0.0.1", controllerPorts[i]));
        }
        return out;
    }

    /** Deletes every data dir of a stopped node: its partition logs, its metadata log and both meta.properties. */
    void wipe(int node) throws IOException {
        if (isAlive(node)) {
            throw new IllegalStateException("node " + node + " is running");
        }
        TestBroker.deleteRecursively(logDir(node));
    }

    /** The cluster's directory: every node's data dir and logs. */
    Path dir() {
        return root;
    }

    Path logDir(int node) {
        return root.resolve("node-" + node).resolve("logs");
    }

    private Path logFile(int node, int start) {
        return root.resolve("node-" + node).resolve("broker-" + start + ".log");
    }

    String log(int node) throws IOException {
        return log(node, 3000, false);
    }

    /** The last {@code maxChars} of each of the node's logs; without the frames of stack traces if {@code noFrames}. */
    private String log(int node, int maxChars, boolean noFrames) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int s = 1; s <= starts[node]; s++) {
            Path f = logFile(node, s);
            if (Files.exists(f)) {
                String text = Files.readString(f);
                if (noFrames) {
                    text = text.lines().filter(l -> !l.startsWith("\tat ") && !l.matches("\\s*\\.\\.\\. \\d+ more"))
                            .collect(Collectors.joining("\n", "", "\n"));
                }
                sb.append("--- node ").append(node).append(" start ").append(s).append('\n')
                        .append(text.length() > maxChars ? text.substring(text.length() - maxChars) : text);
            }
        }
        return sb.toString();
    }

    /** The node's JVM threads as jstack prints them, for a failing test's report. */
    String threadDump(int node) {
        Process p = processes[node];
        if (p == null || !p.isAlive()) {
            return "node " + node + " is not running";
        }
        String jstack = ProcessHandle.current().info().command().map(c -> Path.of(c).resolveSibling("jstack").toString())
                .orElse("jstack");
        try {
            Process dump = new ProcessBuilder(jstack, Long.toString(p.pid())).redirectErrorStream(true).start();
            String out = new String(dump.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            dump.waitFor(30, TimeUnit.SECONDS);
            return out;
        } catch (IOException e) {
            return "no thread dump of node " + node + ": " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private void killAll() {
        for (Process p : processes) {
            if (p != null) {
                p.destroyForcibly();
            }
        }
    }

    @Override
    public void close() throws Exception {
        for (int i = 0; i < size(); i++) {
            kill(i);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook runs anyway
        }
        if (System.getenv("SKEIN_KEEP_CLUSTER_DIR") == null && !keepDir) {
            TestBroker.deleteRecursively(root);
        }
    }
}
