package dev.skein.e2e.skein;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Installs the checked-in CRDs ({@code crds/*.yml}, which the operator build keeps equal to the
 * generated ones) into the API server, as a user would, and waits until they are served. Server-side
 * apply, so every test class may call it; they stay installed (the control plane is per run).
 */
final class SkeinCrds {
    private SkeinCrds() {
    }

    static List<CustomResourceDefinition> install(KubernetesClient client) throws IOException {
        List<CustomResourceDefinition> crds = new ArrayList<>();
        try (Stream<Path> files = Files.list(SkeinJars.root().resolve("crds"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yml")).sorted().toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions().load(in).item();
                    client.apiextensions().v1().customResourceDefinitions().resource(crd).forceConflicts().serverSideApply();
                    crds.add(crd);
                }
            }
        }
        assertThat(crds).extracting(c -> c.getMetadata().getName())
                .containsExactly("skeinclusters.skein.dev", "skeinconsumergroups.skein.dev", "skeintopics.skein.dev");
        for (CustomResourceDefinition crd : crds) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(client.apiextensions().v1()
                    .customResourceDefinitions().withName(crd.getMetadata().getName()).get().getStatus().getConditions())
                    .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Established=True")));
        }
        return crds;
    }
}
