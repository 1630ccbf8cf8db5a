package dev.skein.e2e.skein;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.KafkaException;
import org.awaitility.core.ConditionTimeoutException;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * Skein brokers for end-to-end tests: {@code broker/target/skein-broker.jar} run as processes on
 * loopback, each a controller voter, with a generated server.properties under a temp dir that
 * {@link #close()} deletes. A shutdown hook kills them if the test JVM stops first.
 */
public final class BrokerCluster implements AutoCloseable {
    private final Path root;
    private final int[] ports;
    private final List<Process> processes = new ArrayList<>();
    private final Thread killOnExit = new Thread(this::killAll, "skein-e2e-brokers-cleanup");

    private BrokerCluster(Path root, int[] ports) {
        this.root = root;
        this.ports = ports;
    }

    /** Starts {@code size} brokers and waits until every one sees them all. */
    public static BrokerCluster start(int size) throws IOException {
        Path root = Files.createTempDirectory("skein-e2e-brokers-");
        int[] ports = new int[size];
        int[] controllerPorts = new int[size];
        List<String> voters = new ArrayList<>();
        // distinct: six random picks from the range would name one port twice about once in a thousand starts
        Set<Integer> picked = new HashSet<>();
        for (int i = 0; i < size; i++) {
            ports[i] = pickDistinct(picked);
            controllerPorts[i] = pickDistinct(picked);
            voters.add(i + "@127.0.0.1:" + controllerPorts[i]);
        }
        BrokerCluster cluster = new BrokerCluster(root, ports);
        Runtime.getRuntime().addShutdownHook(cluster.killOnExit);
        try {
            for (int i = 0; i < size; i++) {
                Path dir = Files.createDirectories(root.resolve("node-" + i));
                Map<String, String> p = new LinkedHashMap<>();
                p.put("process.roles", "broker,controller");
                p.put("node.id", Integer.toString(i));
                p.put("controller.quorum.voters", String.join(",", voters));
                p.put("listeners", "PLAINTEXT://127.0.0.1:" + ports[i] + ",CONTROLLER://127.0.0.1:" + controllerPorts[i]);
                p.put("controller.listener.names", "CONTROLLER");
                p.put("inter.broker.listener.name", "PLAINTEXT");
                p.put("log.dirs", dir.resolve("logs").toString());
                p.put("offsets.topic.num.partitions", "5");
                p.put("offsets.topic.replication.factor", Integer.toString(Math.min(3, size)));
                p.put("group.initial.rebalance.delay.ms", "0");
                p.put("skein.http.port", "0");
                p.put("num.io.threads", "2");
                p.put("num.network.threads", "2");
                Properties props = new Properties();
                props.putAll(p);
                Path file = dir.resolve("server.properties");
                try (OutputStream out = Files.newOutputStream(file)) {
                    props.store(out, "BrokerCluster node " + i);
                }
                cluster.processes.add(new ProcessBuilder(List.of(SkeinJars.java(), "-Xmx384m", "-jar",
                        SkeinJars.broker().toString(), file.toString()))
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("broker.log").toFile())
                        .start());
            }
            cluster.awaitBrokers(size);
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private static int pickDistinct(Set<Integer> picked) throws IOException {
        int port;
        do {
            port = LoopbackPorts.pick();
        } while (!picked.add(port));
        return port;
    }

    private void awaitBrokers(int size) {
        int[] seen = {0};
        try {
            // A broker that exits fails the wait at once; only the Admin client's errors (a broker not
            // yet listening, a request timing out) are retried.
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> {
                for (int i = 0; i < processes.size(); i++) {
                    if (!processes.get(i).isAlive()) {
                        throw new IllegalStateException("broker " + i + " exited with " + processes.get(i).exitValue()
                                + "\n" + logs(40));
                    }
                }
                try (Admin admin = admin()) {
                    seen[0] = admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).size();
                } catch (ExecutionException | TimeoutException | KafkaException notYet) {
                    return false;
                }
                return seen[0] == size;
            });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("the " + size + " brokers did not all register within 120 s (the last"
                    + " DescribeCluster saw " + seen[0] + ")\n" + logs(80), e);
        }
    }

    /** host:port of every broker, comma separated. */
    public String bootstrapServers() {
        return java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    /** A new Admin client of this cluster (the caller closes it). */
    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        return Admin.create(p);
    }

    /** The last {@code lines} lines of each broker's log. */
    public String logs(int lines) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < processes.size(); i++) {
            Path log = root.resolve("node-" + i).resolve("broker.log");
            try {
                List<String> all = Files.exists(log) ? Files.readAllLines(log) : List.of();
                out.append("---- broker ").append(i).append(" (").append(log).append(")\n");
                all.subList(Math.max(0, all.size() - lines), all.size()).forEach(l -> out.append(l).append('\n'));
            } catch (IOException e) {
                out.append("(cannot read ").append(log).append(": ").append(e.getMessage()).append(")\n");
            }
        }
        return out.toString();
    }

    private void killAll() {
        processes.forEach(Process::destroyForcibly);
    }

    @Override
    public void close() {
        killAll();
        for (Process p : processes) {
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
