package dev.skein.e2e.skein;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code operator/target/skein-operator.jar} run as a process against the test's control plane,
 * as it is deployed (its own JVM, a kubeconfig), watching one namespace. Its output goes to
 * {@code e2e/target/e2e-operator/<name>.log}, kept after the run.
 */
public final class OperatorProcess implements AutoCloseable {
    private final Process process;
    private final Path log;
    private final int httpPort;
    private final Thread killOnExit;

    private OperatorProcess(Process process, Path log, int httpPort) {
        this.process = process;
        this.log = log;
        this.httpPort = httpPort;
        this.killOnExit = new Thread(process::destroyForcibly, "skein-e2e-operator-cleanup");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /**
     * @param reconcilers   which reconcilers run (skeincluster, skeintopic, comma separated)
     * @param resyncSeconds how often the operator reconciles each resource without an event
     */
    public static OperatorProcess start(Path kubeconfig, String namespace, String reconcilers, int resyncSeconds)
            throws IOException {
        return start(kubeconfig, namespace, reconcilers, resyncSeconds, false);
    }

    /**
     * @param clusterDns whether the operator resolves cluster DNS names ({@code *.svc}) as pods of the
     *                   process kubelet do: its JVM gets this module's test classes, with their
     *                   {@code ClusterDnsResolverProvider}, and the kubelet's directory
     */
    public static OperatorProcess start(Path kubeconfig, String namespace, String reconcilers, int resyncSeconds,
                                        boolean clusterDns) throws IOException {
        return start(kubeconfig, namespace, reconcilers, resyncSeconds, clusterDns, List.of(), namespace);
    }

    /**
     * @param extraArgs more operator arguments (e.g. {@code --leader-election-namespace NS})
     * @param logName   the log file's name (without .log), unique per process of a test
     */
    public static OperatorProcess start(Path kubeconfig, String namespace, String reconcilers, int resyncSeconds,
                                        boolean clusterDns, List<String> extraArgs, String logName)
            throws IOException {
        Path dir = Files.createDirectories(SkeinJars.root().resolve("e2e/target/e2e-operator"));
        Path log = dir.resolve(logName + ".log");
        List<String> command = new ArrayList<>(List.of(SkeinJars.java(), "-Xmx256m"));
        if (clusterDns) {
            command.add("-Dskein.e2e.kubeletDir=" + Path.of(System.getProperty("skein.e2e.kubeletDir",
                    "target/e2e-kubelet")).toAbsolutePath());
            command.addAll(List.of("-cp", SkeinJars.operator() + File.pathSeparator
                    + SkeinJars.root().resolve("e2e/target/test-classes"), "dev.skein.operator.SkeinOperator"));
        } else {
            command.addAll(List.of("-jar", SkeinJars.operator().toString()));
        }
        command.addAll(List.of("--kubeconfig", kubeconfig.toString(), "--namespace", namespace,
                "--reconcilers", reconcilers, "--resync-seconds", Integer.toString(resyncSeconds)));
        int httpPort = LoopbackPorts.pick();
        command.addAll(List.of("--http-port", Integer.toString(httpPort)));
        command.addAll(extraArgs);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new OperatorProcess(process, log, httpPort);
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The port of the operator's /metrics and /healthz. */
    public int httpPort() {
        return httpPort;
    }

    public long pid() {
        return process.pid();
    }

    /** SIGKILL: no shutdown hook, the Lease is not released (as when its node is lost). */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Resident memory of the operator process in KiB (from /proc), or -1 if unknown. */
    public long residentKib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    public String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(log);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e.getMessage() + ")";
        }
    }

    /** SIGTERM (the operator's shutdown hook stops the reconcilers), then SIGKILL after 30 s. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }
}
