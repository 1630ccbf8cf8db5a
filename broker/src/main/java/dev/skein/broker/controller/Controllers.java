package dev.skein.broker.controller;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.controller.raft.RaftController;
import dev.skein.broker.controller.raft.RaftControllerSettings;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.UUID;

/**
 * Chooses the controller of a broker: with two or more {@code controller.quorum.voters} the node
 * is a voter of the Raft quorum ({@link RaftController}); with at most one, the single-node
 * {@link LocalController} keeps metadata in the log dir, as before.
 */
public final class Controllers {
    private Controllers() {
    }

    public static boolean isQuorum(BrokerConfig config) {
        return config.controllerQuorumVoters().size() >= 2;
    }

    /**
     * The cluster id to format the log dirs with: the configured one, else for a quorum one derived
     * from the voters (every voter must agree on it), else null (a random one is chosen on format).
     */
    public static String clusterId(BrokerConfig config) {
        if (config.clusterId() != null || !isQuorum(config)) {
            return config.clusterId();
        }
        UUID u = UUID.nameUUIDFromBytes(String.join(",", config.controllerQuorumVoters()).getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits()).toString();
    }

    /** Creates and starts the controller of this node. */
    public static Controller start(BrokerConfig config, String clusterId, ClusterImage.BrokerInfo self, Time time)
            throws IOException {
        if (!isQuorum(config)) {
            return new LocalController(config.logDirs().getFirst().resolve("skein-metadata"), clusterId, self);
        }
        RaftController controller = new RaftController(RaftControllerSettings.from(config, clusterId), time,
                new Random(time.nanoseconds() ^ ((long) config.nodeId() << 32)));
        try {
            controller.start();
        } catch (IOException | RuntimeException e) {
            controller.close();
            throw e;
        }
        return controller;
    }
}
