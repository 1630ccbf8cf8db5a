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
    private final Map<String, Map<String, String>> brokerConfigs;

    public ClusterImage(String clusterId, int controllerId, List<BrokerInfo> brokers, Collection<TopicMetadata> topics) {
        this(clusterId, controllerId, brokers, topics, Map.of());
    }

    /** With dynamic broker config overrides by resource ("" = cluster-wide default, else a broker id). */
    public ClusterImage(String clusterId, int controllerId, List<BrokerInfo> brokers, Collection<TopicMetadata> topics,
                        Map<String, Map<String, String>> brokerConfigs) {
        Map<String, Map<String, String>> c = new TreeMap<>();
        brokerConfigs.forEach((k, v) -> c.put(k, Map.copyOf(v)));
        this.brokerConfigs = java.util.Collections.unmodifiableMap(c);
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

    /** This image with the dynamic broker config overrides ("" = cluster-wide default, else a broker id). */
    public ClusterImage withBrokerConfigs(Map<String, Map<String, String>> configs) {
        return new ClusterImage(clusterId, controllerId, brokers, topicsByName.values(), configs);
    }

    /** Dynamic broker config overrides by resource: "" is the cluster-wide default, else a broker id. */
    public Map<String, Map<String, String>> brokerConfigs() {
        return brokerConfigs;
    }

    /** The dynamic value of {@code key} for {@code brokerId}: its own override, else the cluster default, else null. */
    public String dynamicBrokerConfig(int brokerId, String key) {
        String v = brokerConfigs.getOrDefault(Integer.toString(brokerId), Map.of()).get(key);
        return v != null ? v : brokerConfigs.getOrDefault("", Map.of()).get(key);
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
