package dev.skein.broker.metadata;

import org.apache.kafka.common.Uuid;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An immutable snapshot of the cluster metadata a broker serves from: the cluster id, the brokers
 * and the topics. A new image replaces the old one atomically on each change, so a request sees one
 * consistent view.
 */
public final class ClusterImage {
    private final String clusterId;
    private final int controllerId;
    private final List<BrokerInfo> brokers;
    private final Map<String, TopicMetadata> topicsByName;
    private final Map<Uuid, TopicMetadata> topicsById;

    public ClusterImage(String clusterId, int controllerId, List<BrokerInfo> brokers, Collection<TopicMetadata> topics) {
        this.clusterId = clusterId;
        this.controllerId = controllerId;
        this.brokers = List.copyOf(brokers);
        Map<String, TopicMetadata> byName = new TreeMap<>();
        Map<Uuid, TopicMetadata> byId = new HashMap<>();
        for (TopicMetadata t : topics) {
            byName.put(t.name(), t);
            byId.put(t.id(), t);
        }
        this.topicsByName = java.util.Collections.unmodifiableMap(byName);
        this.topicsById = Map.copyOf(byId);
    }

    public String clusterId() {
        return clusterId;
    }

    public int controllerId() {
        return controllerId;
    }

    public List<BrokerInfo> brokers() {
        return brokers;
    }

    public BrokerInfo broker(int id) {
        for (BrokerInfo b : brokers) {
            if (b.id() == id) {
                return b;
            }
        }
        return null;
    }

    /** Topics sorted by name. */
    public Collection<TopicMetadata> topics() {
        return topicsByName.values();
    }

    public TopicMetadata topic(String name) {
        return topicsByName.get(name);
    }

    public TopicMetadata topic(Uuid id) {
        return topicsById.get(id);
    }

    /** Brokers that may lead or follow: registered and not fenced. */
    public boolean isLive(int brokerId) {
        BrokerInfo b = broker(brokerId);
        return b != null && !b.fenced();
    }

    /**
     * A registered broker: its endpoint as clients see it, its rack, the incarnation of its log dir
     * (a broker that lost its disk comes back as a new incarnation) and whether it is fenced.
     */
    public record BrokerInfo(int id, String host, int port, String rack, Uuid incarnation, boolean fenced) {
        public BrokerInfo(int id, String host, int port, String rack) {
            this(id, host, port, rack, Uuid.ZERO_UUID, false);
        }
    }
}
