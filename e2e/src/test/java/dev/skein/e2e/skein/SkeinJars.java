package dev.skein.e2e.skein;

import java.nio.file.Files;
import java.nio.file.Path;

/** The runnable jars the build makes, which the end-to-end tests start as processes. */
final class SkeinJars {
    private SkeinJars() {
    }

    static Path root() {
        return Path.of(System.getProperty("skein.e2e.dir", "e2e")).toAbsolutePath().normalize().getParent();
    }

    static Path broker() {
        return existing(root().resolve("broker/target/skein-broker.jar"));
    }

    static Path operator() {
        return existing(root().resolve("operator/target/skein-operator.jar"));
    }

    /** The java of this JVM (21 or newer), not whatever is first on the PATH. */
    static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private static Path existing(Path jar) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: build it with "
                    + "./mvnw -pl broker,operator -am package -DskipTests (e2e/run does)");
        }
        return jar;
    }
}
