package dev.skein.broker.server;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Formats and locks the log dirs. Each dir holds Kafka's {@code meta.properties} (cluster id, node
 * id, directory id); a dir without one is formatted on first start. The directory id of the first
 * dir is this broker's incarnation: an empty disk is a new incarnation. A {@code .lock} file held
 * for the broker's lifetime keeps a second process off the same dir.
 */
public final class LogDirs implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LogDirs.class);

    private final String clusterId;
    private final Uuid incarnation;
    private final List<FileChannel> lockChannels = new ArrayList<>();
    private final List<FileLock> locks = new ArrayList<>();

    private LogDirs(String clusterId, Uuid incarnation) {
        this.clusterId = clusterId;
        this.incarnation = incarnation;
    }

    public static LogDirs formatAndLock(List<Path> dirs, int nodeId, String configuredClusterId) throws IOException {
        String clusterId = configuredClusterId;
        for (Path dir : dirs) {
            Properties p = read(dir);
            if (p != null && clusterId == null) {
                clusterId = p.getProperty("cluster.id");
            }
        }
        if (clusterId == null) {
            clusterId = Uuid.randomUuid().toString();
        }
        Uuid incarnation = null;
        LogDirs result = null;
        for (Path dir : dirs) {
            Files.createDirectories(dir);
            Properties p = read(dir);
            if (p == null) {
                p = new Properties();
                p.setProperty("version", "1");
                p.setProperty("cluster.id", clusterId);
                p.setProperty("node.id", Integer.toString(nodeId));
                p.setProperty("directory.id", Uuid.randomUuid().toString());
                write(dir, p);
                log.info("Formatted log dir {} for cluster {} node {}", dir, clusterId, nodeId);
            } else {
                if (!clusterId.equals(p.getProperty("cluster.id"))) {
                    throw new InconsistentClusterIdException("Log dir " + dir + " belongs to cluster "
                            + p.getProperty("cluster.id") + ", not " + clusterId);
                }
                if (!Integer.toString(nodeId).equals(p.getProperty("node.id"))) {
                    throw new IllegalStateException("Log dir " + dir + " belongs to node " + p.getProperty("node.id")
                            + ", but node.id is " + nodeId);
                }
            }
            if (incarnation == null) {
                incarnation = Uuid.fromString(p.getProperty("directory.id"));
                result = new LogDirs(clusterId, incarnation);
            }
            FileChannel ch = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = ch.tryLock();
            if (lock == null) {
                ch.close();
                result.close();
                throw new IOException("Log dir " + dir + " is in use by another process");
            }
            result.lockChannels.add(ch);
            result.locks.add(lock);
        }
        return result;
    }

    private static Properties read(Path dir) throws IOException {
        Path f = dir.resolve("meta.properties");
        if (!Files.exists(f)) {
            return null;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    private static void write(Path dir, Properties p) throws IOException {
        Path tmp = dir.resolve("meta.properties.tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            p.store(w, null);
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, dir.resolve("meta.properties"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    public String clusterId() {
        return clusterId;
    }

    public Uuid incarnation() {
        return incarnation;
    }

    @Override
    public void close() {
        for (FileLock l : locks) {
            try {
                l.release();
            } catch (IOException ignored) {
                // released when the channel closes
            }
        }
        for (FileChannel ch : lockChannels) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing left to do
            }
        }
        locks.clear();
        lockChannels.clear();
    }
}
