package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ImageRegistryTest {

    private final ImageRegistry registry = ImageRegistry.withDefaults()
            .register("skein/broker", List.of("java", "-jar", "broker.jar"));

    @Test
    void imageIsMatchedWithoutTagOrDigest() {
        assertThat(ImageRegistry.repository("skein/broker:0.1.0")).isEqualTo("skein/broker");
        assertThat(ImageRegistry.repository("skein/broker@sha256:abc")).isEqualTo("skein/broker");
        assertThat(ImageRegistry.repository("registry:5000/skein/broker")).isEqualTo("registry:5000/skein/broker");
        assertThat(ImageRegistry.repository("registry:5000/skein/broker:1")).isEqualTo("registry:5000/skein/broker");
    }

    @Test
    void argsFollowTheEntrypointAndCommandReplacesIt() {
        assertThat(registry.commandLine(new ContainerBuilder().withImage("skein/broker:1").withArgs("a.properties")
                .build())).contains(List.of("java", "-jar", "broker.jar", "a.properties"));
        assertThat(registry.commandLine(new ContainerBuilder().withImage("skein/broker").withCommand("sh", "-c")
                .withArgs("echo").build())).contains(List.of("sh", "-c", "echo"));
    }

    @Test
    void unknownImageHasNoCommandLine() {
        assertThat(registry.commandLine(new ContainerBuilder().withImage("nginx:1.27").build())).isEmpty();
    }

    @Test
    void anImageFileIsStagedOutsideTmpAndCopiedAgainWhenItChanges(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path jar = dir.resolve("app.jar");
        java.nio.file.Files.writeString(jar, "one");
        java.nio.file.Path staged = ImageRegistry.staged(jar);
        try {
            assertThat(staged.startsWith("/tmp")).isFalse();
            assertThat(staged).hasFileName("app.jar").hasContent("one");
            java.nio.file.Files.writeString(jar, "two, longer");
            assertThat(ImageRegistry.staged(jar)).isEqualTo(staged).hasContent("two, longer");
        } finally {
            java.nio.file.Files.deleteIfExists(staged);
            java.nio.file.Files.deleteIfExists(staged.getParent());
        }
    }
}
