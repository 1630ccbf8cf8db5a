package dev.skein.broker.it;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.server.SkeinBroker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;

/**
 * Full Skein brokers in this JVM on loopback: the controller voters, then the brokers that are not
 * voters, configured by {@link TestBroker#quorumProperties(Path, int, int)} plus the test's own
 * settings; broker {@code i} is node id {@code i}. Started in order; if one fails to start, the
 * ones started are closed before the failure is thrown. {@link #close} closes every broker.
 */
public final class InJvmCluster implements AutoCloseable {
    private final List<Map<String, String>> properties;
    private final SkeinBroker.ControllerFactory controllers;
    private final List<SkeinBroker> brokers = new ArrayList<>();

    private InJvmCluster(List<Map<String, String>> properties, SkeinBroker.ControllerFactory controllers) {
        this.properties = properties;
        this.controllers = controllers;
    }

    /** {@code voters} voters and {@code observers} broker-only nodes, each configured by {@code configure(nodeId, properties)}. */
    public static InJvmCluster start(Path dir, int voters, int observers, BiConsumer<Integer, Map<String, String>> configure)
            throws Exception {
        return start(dir, voters, observers, configure, null);
    }

    /** As {@link #start(Path, int, int, BiConsumer)}, the controllers made by {@code controllers} (null: as configured). */
    public static InJvmCluster start(Path dir, int voters, int observers, BiConsumer<Integer, Map<String, String>> configure,
                                     SkeinBroker.ControllerFactory controllers) throws Exception {
        List<Map<String, String>> properties = TestBroker.quorumProperties(dir, voters, observers);
        for (int i = 0; i < properties.size(); i++) {
            configure.accept(i, properties.get(i));
        }
        InJvmCluster cluster = new InJvmCluster(properties, controllers);
        try {
            for (int i = 0; i < properties.size(); i++) {
                cluster.brokers.add(cluster.startBroker(i));
            }
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    private SkeinBroker startBroker(int i) throws Exception {
        BrokerConfig config = new BrokerConfig(properties.get(i));
        return controllers == null ? SkeinBroker.start(config) : SkeinBroker.start(config, controllers);
    }

    public SkeinBroker broker(int i) {
        return brokers.get(i);
    }

    /** Every broker, stopped ones included, by node id. */
    public List<SkeinBroker> brokers() {
        return Collections.unmodifiableList(brokers);
    }

    /** The configuration broker {@code i} was (and is re-)started with. */
    public Map<String, String> properties(int i) {
        return properties.get(i);
    }

    /** Starts broker {@code i} again (after the test closed it) on its log dirs, with its configuration. */
    public SkeinBroker restart(int i) throws Exception {
        brokers.get(i).close();
        brokers.set(i, startBroker(i));
        return brokers.get(i);
    }

    /** An Admin client bootstrapped from broker {@code i} alone. */
    public Admin admin(int i) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(i).bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000"));
    }

    /** The bootstrap servers of every broker listening now. */
    public String bootstrap() {
        return brokers.stream().filter(b -> b.port() > 0).map(SkeinBroker::bootstrapServers).collect(Collectors.joining(","));
    }

    @Override
    public void close() {
        brokers.forEach(SkeinBroker::close);
    }
}
