package dev.skein.e2e.chart;

import dev.skein.e2e.ControlPlane;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real helm of the e2e build ({@code e2e/build}), run against the test's control plane, with
 * its configuration, cache and data in a directory of the test (nothing in the user's home).
 */
public final class Helm {
    /** What helm printed (stdout and stderr) and how it exited. */
    public record Result(int exitCode, String output) {
        public Result ok(String what) {
            if (exitCode != 0) {
                throw new AssertionError("helm " + what + " exited " + exitCode + ":\n" + output);
            }
            return this;
        }
    }

    private final ControlPlane controlPlane;
    private final Path home;

    public Helm(ControlPlane controlPlane, Path home) {
        this.controlPlane = controlPlane;
        this.home = home;
    }

    public Result run(String... args) throws IOException, InterruptedException {
        return run(List.of(args));
    }

    public Result run(List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(controlPlane.tool("helm").toString(),
                "--kubeconfig", controlPlane.kubeconfig().toString()));
        command.addAll(args);
        Path output = Files.createTempFile(Files.createDirectories(home), "helm-", ".out");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        pb.environment().putAll(Map.of("HELM_CONFIG_HOME", home.resolve("config").toString(),
                "HELM_CACHE_HOME", home.resolve("cache").toString(), "HELM_DATA_HOME", home.resolve("data").toString()));
        Process process = pb.start();
        if (!process.waitFor(3, TimeUnit.MINUTES)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("helm " + String.join(" ", args) + " still running after 3 minutes");
        }
        String text = Files.readString(output, StandardCharsets.UTF_8);
        Files.delete(output);
        return new Result(process.exitValue(), text);
    }

    /** Test cleanup: {@code helm uninstall --wait} of the release, whatever it prints is logged; never throws on exit codes. */
    public void uninstall(String release, String namespace) throws IOException, InterruptedException {
        Result result = run("uninstall", release, "--namespace", namespace, "--wait", "--timeout", "2m");
        System.out.println("helm uninstall " + release + ": exit " + result.exitCode() + ": " + result.output().strip());
    }

    /** {@code helm template} of the chart as release {@code release} in {@code namespace}, with more args. */
    public String template(String release, String namespace, String... more) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("template", release, RepoFiles.chart().toString(),
                "--namespace", namespace));
        args.addAll(List.of(more));
        return run(args).ok("template " + String.join(" ", more)).output();
    }
}
