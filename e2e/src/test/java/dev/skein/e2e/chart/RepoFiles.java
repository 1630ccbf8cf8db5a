package dev.skein.e2e.chart;

import java.nio.file.Files;
import java.nio.file.Path;

/** Paths of the repository's checked-in files (chart, CRDs, examples), wherever Maven runs the tests from. */
public final class RepoFiles {
    private RepoFiles() {
    }

    /** The repository root: the nearest directory up from here (or skein.e2e.dir's parent) with crds/ and charts/. */
    public static Path root() {
        String e2eDir = System.getProperty("skein.e2e.dir");
        Path start = e2eDir != null ? Path.of(e2eDir).toAbsolutePath().getParent() : Path.of("").toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("crds")) && Files.isDirectory(dir.resolve("charts"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no directory with crds/ and charts/ at or above " + start);
    }

    public static Path chart() {
        return root().resolve("charts/skein-operator");
    }
}
