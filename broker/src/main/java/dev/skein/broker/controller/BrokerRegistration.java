package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;

/**
 * A broker as the controller quorum knows it: endpoint, rack, log-dir incarnation, the broker
 * epoch of its current registration (the log index of its RegisterBroker command) and whether it
 * is fenced.
 */
public record BrokerRegistration(int id, String host, int port, String rack, Uuid incarnation, long epoch,
                                 boolean fenced) {

    public BrokerRegistration withFenced(boolean newFenced) {
        return new BrokerRegistration(id, host, port, rack, incarnation, epoch, newFenced);
    }

    public ClusterImage.BrokerInfo toInfo() {
        return new ClusterImage.BrokerInfo(id, host, port, rack, incarnation, fenced);
    }
}
