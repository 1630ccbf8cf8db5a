package dev.skein.e2e;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The helm built by e2e/build installs and uninstalls a chart on the control plane (the way charts/ will be tested). */
@ExtendWith(ControlPlaneExtension.class)
class HelmE2E {

    private static String helm(ControlPlane controlPlane, Path home, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(controlPlane.tool("helm").toString(),
                "--kubeconfig", controlPlane.kubeconfig().toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        // Helm's own state stays in the test's directory, not in the user's home.
        pb.environment().putAll(Map.of("HELM_CONFIG_HOME", home.resolve("config").toString(),
                "HELM_CACHE_HOME", home.resolve("cache").toString(), "HELM_DATA_HOME", home.resolve("data").toString()));
        Process process = pb.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(process.exitValue()).as("helm %s:%n%s", String.join(" ", args), output).isZero();
        return output;
    }

    private static Path chart(Path dir) throws IOException {
        Path chart = dir.resolve("demo");
        Files.createDirectories(chart.resolve("templates"));
        Files.writeString(chart.resolve("Chart.yaml"), "apiVersion: v2\nname: demo\nversion: 0.1.0\n");
        Files.writeString(chart.resolve("values.yaml"), "greeting: hello\n");
        Files.writeString(chart.resolve("templates/configmap.yaml"), """
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: {{ .Release.Name }}-settings
                data:
                  greeting: {{ .Values.greeting | quote }}
                """);
        return chart;
    }

    @Test
    void chartInstallsWithValuesAndUninstallsCleanly(ControlPlane controlPlane, KubernetesClient client,
                                                     @TempDir Path dir) throws Exception {
        Path chart = chart(dir);

        helm(controlPlane, dir, "install", "demo", chart.toString(), "--namespace", "helm", "--create-namespace",
                "--set", "greeting=bonjour", "--wait");

        ConfigMap settings = client.configMaps().inNamespace("helm").withName("demo-settings").get();
        assertThat(settings.getData()).containsEntry("greeting", "bonjour");
        assertThat(helm(controlPlane, dir, "list", "--namespace", "helm")).contains("demo").contains("deployed");

        helm(controlPlane, dir, "uninstall", "demo", "--namespace", "helm", "--wait");

        assertThat(client.configMaps().inNamespace("helm").withName("demo-settings").get()).isNull();
    }
}
