package dev.skein.e2e.kubelet;

import io.fabric8.kubernetes.api.model.Container;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Maps container images to local commands: there is no container engine, so an "image" is an
 * entrypoint on this machine. A container's {@code command} replaces the entrypoint and its
 * {@code args} follow, as with a real image's ENTRYPOINT and CMD.
 *
 * <p>Built in: {@code skein-e2e/sleeper} (sleeps until stopped) and {@code skein-e2e/shell}
 * ({@code /bin/sh -c}, the script in {@code args}). Tests register the broker and operator images.
 * An image is matched without its tag or digest.
 */
public final class ImageRegistry {

    private final Map<String, List<String>> entrypoints = new ConcurrentHashMap<>();

    public static ImageRegistry withDefaults() {
        ImageRegistry registry = new ImageRegistry();
        registry.register("skein-e2e/sleeper", List.of("sleep", "infinity"));
        registry.register("skein-e2e/shell", List.of("/bin/sh", "-c"));
        return registry;
    }

    /**
     * {@code file} (a jar of the build) where a pod can read it: a pod's {@code /tmp} may be an
     * emptyDir (read-only root filesystems need one), which hides whatever the host keeps under /tmp,
     * a checkout there included. So an image's file is staged under {@code ~/.cache/skein-e2e/images},
     * one directory per source path, copied again when the source changed.
     */
    public static Path staged(Path file) {
        Path source = file.toAbsolutePath().normalize();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(source.toString().getBytes(StandardCharsets.UTF_8));
            Path dir = Path.of(System.getProperty("user.home"), ".cache", "skein-e2e", "images",
                    HexFormat.of().formatHex(digest, 0, 6));
            Path target = dir.resolve(source.getFileName());
            if (!Files.isRegularFile(target) || Files.size(target) != Files.size(source)
                    || Files.getLastModifiedTime(target).compareTo(Files.getLastModifiedTime(source)) < 0) {
                Files.createDirectories(dir);
                Path partial = Files.createTempFile(dir, source.getFileName().toString(), ".partial");
                Files.copy(source, partial, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stage " + source + " for pods", e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** Makes {@code image} (without tag) run {@code entrypoint}. */
    public ImageRegistry register(String image, List<String> entrypoint) {
        entrypoints.put(repository(image), List.copyOf(entrypoint));
        return this;
    }

    /** The command line for a container, or empty if its image is not registered. */
    Optional<List<String>> commandLine(Container container) {
        List<String> entrypoint = entrypoints.get(repository(container.getImage()));
        if (entrypoint == null) {
            return Optional.empty();
        }
        List<String> line = new ArrayList<>(container.getCommand() == null || container.getCommand().isEmpty()
                ? entrypoint : container.getCommand());
        if (container.getArgs() != null) {
            line.addAll(container.getArgs());
        }
        return Optional.of(line);
    }

    static String repository(String image) {
        String withoutDigest = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        int slash = withoutDigest.lastIndexOf('/');
        int colon = withoutDigest.lastIndexOf(':');
        return colon > slash ? withoutDigest.substring(0, colon) : withoutDigest;
    }
}
