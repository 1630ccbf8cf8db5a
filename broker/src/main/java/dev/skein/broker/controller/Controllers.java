package dev.skein.broker.controller;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.controller.raft.QuorumObserver;
import dev.skein.broker.controller.raft.QuorumVoter;
import dev.skein.broker.controller.raft.RaftController;
import dev.skein.broker.controller.raft.RaftControllerSettings;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * Chooses the controller of a broker: with two or more {@code controller.quorum.voters} a node
 * whose {@code process.roles} include {@code controller} is a voter of the Raft quorum
 * ({@link RaftController}), and a node with {@code process.roles=broker} follows the quorum
 * without voting ({@link QuorumObserver}), so a cluster can have more brokers than voters. With
 * at most one voter the single-node {@link LocalController} keeps metadata in the log dir.
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

    /**
     * Whether this node votes in the controller quorum: its roles include {@code controller}, and
     * then it must be one of the voters; a node with only the {@code broker} role must not be.
     *
     * @throws ConfigException if the roles and the voters disagree (the message names both keys)
     */
    public static boolean isVoter(BrokerConfig config) {
        List<String> roles = config.processRoles();
        for (String r : roles) {
            if (!r.equals("broker") && !r.equals("controller")) {
                throw new ConfigException(BrokerConfig.PROCESS_ROLES, roles, "unknown role '" + r
                        + "': the roles are broker and controller");
            }
        }
        if (!roles.contains("broker")) {
            throw new ConfigException(BrokerConfig.PROCESS_ROLES, roles,
                    "a Skein node is always a broker: use 'broker' or 'broker,controller'");
        }
        boolean listed = QuorumVoter.parseAll(config.controllerQuorumVoters()).stream().anyMatch(v -> v.id() == config.nodeId());
        boolean controller = roles.contains("controller");
        if (controller && !listed && isQuorum(config)) {
            throw new ConfigException(BrokerConfig.PROCESS_ROLES, roles, "node.id " + config.nodeId()
                    + " has the controller role but is not in controller.quorum.voters " + config.controllerQuorumVoters());
        }
        if (!controller && listed) {
            throw new ConfigException(BrokerConfig.PROCESS_ROLES, roles, "node.id " + config.nodeId()
                    + " is in controller.quorum.voters but process.roles lacks 'controller'");
        }
        return controller;
    }

    /** Creates and starts the controller of this node. */
    public static Controller start(BrokerConfig config, String clusterId, ClusterImage.BrokerInfo self, Time time)
            throws IOException {
        boolean voter = isVoter(config);
        if (!isQuorum(config)) {
            if (!voter) {
                throw new ConfigException(BrokerConfig.PROCESS_ROLES, config.processRoles(),
                        "a broker without the controller role needs a quorum of at least two controller.quorum.voters");
            }
            return new LocalController(config.logDirs().getFirst().resolve("skein-metadata"), clusterId, self);
        }
        if (!voter) {
            QuorumObserver observer = new QuorumObserver(RaftControllerSettings.from(config, clusterId), time);
            observer.start();
            return observer;
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
