package dev.skein.broker.controller.raft;

import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.ratis.protocol.RaftGroupId;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Properties;

/**
 * The metadata log dir of a controller voter ({@code <first log dir>/skein-raft}): the Ratis group
 * directory (the Raft log, votes and snapshots) and, beside it, a {@code meta.properties} naming
 * the voter's identity ({@link VoterKey}: cluster id, node id, directory id), as Kafka's
 * {@code metadata.log.dir} has one.
 *
 * <p>The identity is trusted only together with the Raft state it belongs to: with the group
 * directory present the voter rejoins as itself; without it the voter has lost its log (or never
 * had one) and is {@linkplain #isFresh() fresh}, whatever an older {@code meta.properties} says, so
 * it must join as a new member. The identity is written before the group directory is created, so
 * a crash in between leaves a fresh voter, never a group directory without its identity (except
 * for quorums formed before voter keys, whose peer id is the bare node id).
 */
public final class VoterStorage {
    static final String META_FILE = "meta.properties";

    private final Path dir;
    private final RaftGroupId groupId;
    private final String clusterId;
    private final int nodeId;

    public VoterStorage(Path dir, RaftGroupId groupId, String clusterId, int nodeId) {
        this.dir = dir;
        this.groupId = groupId;
        this.clusterId = clusterId;
        this.nodeId = nodeId;
    }

    public Path dir() {
        return dir;
    }

    /** The Ratis directory of the controller group (holds the Raft log, the vote and the snapshots). */
    Path groupDir() {
        return dir.resolve(groupId.getUuid().toString());
    }

    /** Whether this voter has no Raft state of the quorum: a new disk, a wiped one, or a first start. */
    public boolean isFresh() {
        return !Files.isDirectory(groupDir());
    }

    /**
     * The identity of a voter whose Raft state is intact: the one recorded in {@code meta.properties},
     * or, for a group directory older than voter keys, the bare node id.
     *
     * @throws IllegalStateException if the voter is fresh (it has no identity to rejoin as)
     * @throws InconsistentClusterIdException if the dir belongs to another cluster or node
     */
    public VoterKey identity() throws IOException {
        if (isFresh()) {
            throw new IllegalStateException("The metadata log dir " + dir + " holds no Raft state of the quorum");
        }
        Properties p = read();
        if (p == null) {
            return new VoterKey(nodeId, VoterKey.LEGACY_DIRECTORY_ID);
        }
        if (!clusterId.equals(p.getProperty("cluster.id"))) {
            throw new InconsistentClusterIdException("Metadata log dir " + dir + " belongs to cluster "
                    + p.getProperty("cluster.id") + ", not " + clusterId);
        }
        VoterKey key = new VoterKey(Integer.parseInt(p.getProperty("node.id")),
                org.apache.kafka.common.Uuid.fromString(p.getProperty("directory.id")));
        if (key.nodeId() != nodeId) {
            throw new IllegalStateException("Metadata log dir " + dir + " belongs to node " + key.nodeId()
                    + ", but node.id is " + nodeId);
        }
        return key;
    }

    /**
     * Records the identity a fresh voter starts its Raft state under; durable (fsync) before it
     * returns, so the group directory that follows is always matched by it.
     */
    public void format(VoterKey key) throws IOException {
        if (!isFresh()) {
            throw new IllegalStateException("The metadata log dir " + dir + " already holds Raft state");
        }
        if (key.nodeId() != nodeId) {
            throw new IllegalArgumentException("voter " + key + " is not node " + nodeId);
        }
        Files.createDirectories(dir);
        Properties p = new Properties();
        p.setProperty("version", "1");
        p.setProperty("cluster.id", clusterId);
        p.setProperty("node.id", Integer.toString(nodeId));
        p.setProperty("directory.id", key.directoryId().toString());
        write(p);
    }

    /**
     * Records, before the group is created, that this voter starts the quorum alone: until its log
     * holds the configuration, a restart must start it again as the only voter.
     */
    public void markBootstrap() throws IOException {
        Properties p = read();
        if (p == null) {
            throw new IllegalStateException("The metadata log dir " + dir + " is not formatted");
        }
        p.setProperty("bootstrap", "true");
        write(p);
    }

    /** Whether this voter started the quorum as its only voter ({@link #markBootstrap}). */
    public boolean isBootstrap() throws IOException {
        Properties p = read();
        return p != null && Boolean.parseBoolean(p.getProperty("bootstrap"));
    }

    private void write(Properties p) throws IOException {
        Path tmp = dir.resolve(META_FILE + ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            p.store(w, "controller voter identity (node id + directory id)");
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, dir.resolve(META_FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // not every file system syncs a directory
        }
    }

    private Properties read() throws IOException {
        Path f = dir.resolve(META_FILE);
        if (!Files.exists(f)) {
            return null;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }
}
