package dev.skein.operator.kafka;

import java.util.Optional;

/**
 * Where the operator reaches a SkeinCluster's brokers. The production resolver reads the cluster's
 * status; tests point it at brokers on loopback.
 */
@FunctionalInterface
public interface BootstrapResolver {
    /** The bootstrap servers of the SkeinCluster {@code cluster} in {@code namespace}; empty if there is no such cluster. */
    Optional<String> bootstrapServers(String namespace, String cluster);
}
