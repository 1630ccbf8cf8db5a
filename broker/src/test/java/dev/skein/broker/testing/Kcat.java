package dev.skein.broker.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The librdkafka command-line client the tests drive brokers with: on PATH, or the test is skipped (failed in CI). */
public final class Kcat {
    private Kcat() {
    }

    /** Skips the calling test when kcat is not installed, and fails it instead when {@code CI=true}. */
    public static void assumeInstalled() {
        boolean present = onPath("kcat");
        if (!present && "true".equalsIgnoreCase(System.getenv("CI"))) {
            fail("kcat is not on PATH, and CI=true: install it (Debian package kcat; .ci/run does)");
        }
        assumeTrue(present, "kcat is not on PATH; install the Debian package kcat to run this test");
    }

    private static boolean onPath(String binary) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, binary))) {
                return true;
            }
        }
        return false;
    }
}
