package dev.skein.e2e;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * A running Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler) for end-to-end tests: either one this JVM started with {@code e2e/cluster up},
 * or an existing one named by the {@code SKEIN_E2E_KUBECONFIG} environment variable.
 *
 * <p>Guarantees: a control plane this object started is stopped by {@link #close()}, by a JVM
 * shutdown hook if {@code close()} was never reached, and by the watchdog of {@code e2e/cluster}
 * (it watches this JVM's pid) if the JVM is killed. A control plane named by
 * {@code SKEIN_E2E_KUBECONFIG} is never stopped. Component logs stay in {@link #logsDir()}.
 */
public final class ControlPlane implements AutoCloseable {

    /** Environment variable naming the kubeconfig of a control plane to reuse. */
    public static final String KUBECONFIG_ENV = "SKEIN_E2E_KUBECONFIG";

    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
    private static final Duration STOP_TIMEOUT = Duration.ofMinutes(1);

    private final Path e2eDir;
    private final Path runDir;
    private final Path kubeconfig;
    private final boolean owned;
    private final KubernetesClient client;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private ControlPlane(Path e2eDir, Path runDir, Path kubeconfig, boolean owned) {
        this.e2eDir = e2eDir;
        this.runDir = runDir;
        this.kubeconfig = kubeconfig;
        this.owned = owned;
        this.client = newClient();
        this.shutdownHook = new Thread(this::stop, "skein-e2e-control-plane-shutdown");
        if (owned) {
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        }
    }

    /**
     * Reuses the control plane named by {@code SKEIN_E2E_KUBECONFIG}, or starts one with
     * {@code e2e/cluster up} (run dir from the {@code skein.e2e.runDir} system property).
     */
    public static ControlPlane startOrReuse() {
        Path e2eDir = Path.of(System.getProperty("skein.e2e.dir", "e2e")).toAbsolutePath().normalize();
        Path runDir = Path.of(System.getProperty("skein.e2e.runDir",
                e2eDir.resolve("target/e2e-cluster").toString())).toAbsolutePath().normalize();
        String existing = System.getenv(KUBECONFIG_ENV);
        if (existing != null && !existing.isBlank()) {
            Path kubeconfig = Path.of(existing);
            if (!Files.isReadable(kubeconfig)) {
                throw new IllegalStateException(KUBECONFIG_ENV + "=" + existing + " is not a readable file");
            }
            return new ControlPlane(e2eDir, kubeconfig.toAbsolutePath().getParent(), kubeconfig, false);
        }
        Path kubeconfig = up(e2eDir, runDir);
        return new ControlPlane(e2eDir, runDir, kubeconfig, true);
    }

    private static Path up(Path e2eDir, Path runDir) {
        Path script = e2eDir.resolve("cluster");
        if (!Files.isExecutable(script)) {
            throw new IllegalStateException("e2e/cluster not found at " + script
                    + "; set the skein.e2e.dir system property to the e2e directory");
        }
        List<String> command = List.of("bash", script.toString(), "up", "--run-dir", runDir.toString(),
                "--owner-pid", Long.toString(ProcessHandle.current().pid()));
        List<String> stdout = run(command, START_TIMEOUT);
        if (stdout.isEmpty()) {
            throw new IllegalStateException("e2e/cluster up printed no kubeconfig path");
        }
        return Path.of(stdout.getLast().strip());
    }

    /** Runs a command, its stderr passed through, and returns its stdout lines; fails on a non-zero exit. */
    private static List<String> run(List<String> command, Duration timeout) {
        try {
            Process process = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            List<String> lines = new ArrayList<>();
            Thread reader = Thread.ofPlatform().name("skein-e2e-stdout").start(() -> {
                try (var in = process.inputReader(StandardCharsets.UTF_8)) {
                    in.lines().forEach(line -> {
                        synchronized (lines) {
                            lines.add(line);
                        }
                    });
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout);
            }
            reader.join(Duration.ofSeconds(5));
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed with exit code "
                        + process.exitValue() + " (its messages are above)");
            }
            synchronized (lines) {
                return List.copyOf(lines);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
    }

    private KubernetesClient newClient() {
        try {
            Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
            return new KubernetesClientBuilder().withConfig(config).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A client with cluster-admin rights, shared by all tests; closed with the control plane. */
    public KubernetesClient client() {
        return client;
    }

    /** The kubeconfig file (cluster-admin credentials). */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /** The directory holding one log file per component; kept after the control plane stops. */
    public Path logsDir() {
        return runDir.resolve("logs");
    }

    /**
     * A binary of the control plane's build: {@code helm}, {@code kubectl}, {@code kube-apiserver}...
     * (paths from the run dir's cluster.env, written by e2e/cluster up).
     */
    public Path tool(String name) {
        Path env = kubeconfig.toAbsolutePath().getParent().resolve("cluster.env");
        try {
            for (String line : Files.readAllLines(env, StandardCharsets.UTF_8)) {
                if (name.equals("helm") && line.startsWith("HELM_BIN=")) {
                    return Path.of(line.substring("HELM_BIN=".length()), "helm");
                }
                if (!name.equals("helm") && line.startsWith("K8S_BIN=")) {
                    return Path.of(line.substring("K8S_BIN=".length()), name);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("no cluster.env next to " + kubeconfig + " (not started by e2e/cluster?)", e);
        }
        throw new IllegalStateException("cluster.env names no binary directory for " + name);
    }

    /**
     * What a user sees: {@code kubectl <args>} against this control plane (cluster-admin), its
     * output (stdout and stderr) printed into the test's log and returned.
     */
    public String kubectl(String... args) {
        List<String> command = new ArrayList<>(List.of(tool("kubectl").toString(), "--kubeconfig",
                kubeconfig.toString()));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("kubectl " + String.join(" ", args) + " still running after 30 s");
            }
            System.out.printf("$ kubectl %s%n%s", String.join(" ", args), out);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The e2e/ directory (scripts, versions). */
    public Path e2eDir() {
        return e2eDir;
    }

    /** Whether this JVM started the control plane (and so stops it). */
    public boolean owned() {
        return owned;
    }

    /** The last {@code lines} lines of every {@code *.log} file under {@code dir}, for a failure report. */
    public static String tailLogs(Path dir, int lines) {
        StringBuilder out = new StringBuilder();
        if (!Files.isDirectory(dir)) {
            return out.toString();
        }
        try (Stream<Path> logs = Files.walk(dir)) {
            for (Path log : logs.filter(p -> p.toString().endsWith(".log") && Files.isRegularFile(p)).sorted().toList()) {
                List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
                out.append("---- ").append(log).append(" (last ").append(Math.min(lines, all.size()))
                        .append(" of ").append(all.size()).append(" lines)\n");
                all.subList(Math.max(0, all.size() - lines), all.size())
                        .forEach(line -> out.append(line).append('\n'));
            }
        } catch (IOException e) {
            out.append("(could not read logs: ").append(e).append(")\n");
        }
        return out.toString();
    }

    /** Closes the client and, if this JVM started the control plane, stops it (logs are kept). */
    @Override
    public void close() {
        stop();
        if (owned) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // Already running the hooks: stop() has done the work.
            }
        }
    }

    private void stop() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        client.close();
        if (owned) {
            run(List.of("bash", e2eDir.resolve("cluster").toString(), "down", "--run-dir", runDir.toString(),
                    "--keep-logs"), STOP_TIMEOUT);
        }
    }
}
