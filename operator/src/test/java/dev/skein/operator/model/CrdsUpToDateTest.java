package dev.skein.operator.model;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The CRDs checked in under {@code crds/} are exactly the ones the build generates from the model
 * classes (crd-generator-maven-plugin, process-classes phase). When this fails, regenerate them with
 * {@code ./mvnw -pl operator -Pupdate-crds process-classes} and commit the result.
 */
class CrdsUpToDateTest {
    private static final String HOW_TO_FIX =
            "crds/ is stale: run ./mvnw -pl operator -Pupdate-crds process-classes and commit crds/";

    private static Path dir(String property) {
        String value = System.getProperty(property);
        assertThat(value).as("system property %s (set by the operator pom)", property).isNotNull();
        return Path.of(value);
    }

    private static Set<String> yamlFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return Set.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yml") || n.endsWith(".yaml"))
                    .collect(java.util.stream.Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void generatorProducesOneCrdPerKind() throws IOException {
        assertThat(yamlFiles(dir("skein.crds.generated"))).containsExactly(
                "skeinclusters.skein.dev-v1.yml", "skeinconsumergroups.skein.dev-v1.yml", "skeintopics.skein.dev-v1.yml");
    }

    @Test
    void checkedInCrdsMatchTheGeneratedOnes() throws IOException {
        Path generated = dir("skein.crds.generated");
        Path checkedIn = dir("skein.crds.checkedIn");
        assertThat(yamlFiles(checkedIn)).as(HOW_TO_FIX).isEqualTo(yamlFiles(generated));
        for (String name : yamlFiles(generated)) {
            List<String> want = Files.readAllLines(generated.resolve(name));
            List<String> have = Files.readAllLines(checkedIn.resolve(name));
            for (int i = 0; i < Math.max(want.size(), have.size()); i++) {
                String w = i < want.size() ? want.get(i) : "<end of file>";
                String h = i < have.size() ? have.get(i) : "<end of file>";
                if (!w.equals(h)) {
                    fail("%s%n%s line %d differs:%n  checked in: %s%n  generated:  %s", HOW_TO_FIX, name, i + 1, h, w);
                }
            }
        }
    }
}
