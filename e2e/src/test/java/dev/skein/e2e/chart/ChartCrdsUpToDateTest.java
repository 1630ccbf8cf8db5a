package dev.skein.e2e.chart;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chart installs the CRDs of {@code charts/skein-operator/crds/}, which must be the repository's
 * {@code crds/} (those generated from the operator's model classes; CrdsUpToDateTest checks that),
 * byte for byte. Helm reads a chart's crds/ directly, so the chart keeps a copy instead of a link.
 */
class ChartCrdsUpToDateTest {
    private static final String HOW_TO_FIX = "charts/skein-operator/crds/ differs from crds/: run "
            + "./mvnw -pl operator -Pupdate-crds process-classes (it writes both) and commit charts/skein-operator/crds/";

    private static List<String> yamlFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yml") || n.endsWith(".yaml"))
                    .sorted().toList();
        }
    }

    @Test
    void chartShipsExactlyTheRepositorysCrds() throws IOException {
        Path crds = RepoFiles.root().resolve("crds");
        Path chartCrds = RepoFiles.chart().resolve("crds");
        assertThat(yamlFiles(crds)).as("the CRDs of crds/").hasSize(3);
        assertThat(yamlFiles(chartCrds)).as(HOW_TO_FIX).isEqualTo(yamlFiles(crds));
        for (String name : yamlFiles(crds)) {
            assertThat(Files.readString(chartCrds.resolve(name))).as("%s: %s", name, HOW_TO_FIX)
                    .isEqualTo(Files.readString(crds.resolve(name)));
        }
    }
}
