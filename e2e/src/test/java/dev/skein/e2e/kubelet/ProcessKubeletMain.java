package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The process kubelet as a program, for people and tools (started by {@code e2e/cluster up
 * --nodes N}): registers the nodes, runs their pods until SIGTERM, then cleans up as
 * {@link ProcessKubelet#close()} does.
 *
 * <p>Usage: {@code ProcessKubeletMain --kubeconfig FILE [--nodes N] [--dir DIR]
 * [--pod-logs DIR] [--image NAME=COMMAND ...]}, where COMMAND is split on spaces (the image's entrypoint).
 */
public final class ProcessKubeletMain {

    private ProcessKubeletMain() {
    }

    public static void main(String[] args) throws Exception {
        Path kubeconfig = null;
        int nodes = 3;
        Path dir = Path.of("target/e2e-kubelet");
        Path podLogs = null;
        ImageRegistry images = ImageRegistry.withDefaults();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kubeconfig" -> kubeconfig = Path.of(args[++i]);
                case "--nodes" -> nodes = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--pod-logs" -> podLogs = Path.of(args[++i]);
                case "--image" -> {
                    String spec = args[++i];
                    int eq = spec.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--image wants NAME=COMMAND, got " + spec);
                    }
                    images.register(spec.substring(0, eq), List.of(spec.substring(eq + 1).split(" ")));
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + " in " + Arrays.toString(args));
            }
        }
        if (kubeconfig == null) {
            throw new IllegalArgumentException("--kubeconfig FILE is required");
        }
        KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig))).build();
        if (podLogs == null) {
            podLogs = dir.resolve("pod-logs");
        }
        ProcessKubelet kubelet = ProcessKubelet.builder(client).nodes(nodes).images(images)
                .rootDir(dir).logDir(podLogs).build().start();
        System.out.printf("process kubelet: %d nodes registered (%s); pod logs in %s%n", nodes,
                String.join(", ", kubelet.nodeNames()), podLogs.toAbsolutePath());
        System.out.flush();
        // The shutdown hook registered by start() cleans up on SIGTERM/SIGINT.
        new CountDownLatch(1).await();
    }
}
