package dev.skein.broker.config;

import dev.skein.broker.storage.LogConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.apache.kafka.common.config.ConfigDef.Importance.MEDIUM;
import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Range.between;
import static org.apache.kafka.common.config.ConfigDef.Type.BOOLEAN;
import static org.apache.kafka.common.config.ConfigDef.Type.DOUBLE;
import static org.apache.kafka.common.config.ConfigDef.Type.INT;
import static org.apache.kafka.common.config.ConfigDef.Type.LIST;
import static org.apache.kafka.common.config.ConfigDef.Type.LONG;
import static org.apache.kafka.common.config.ConfigDef.Type.STRING;

/**
 * The topic-level configs Skein understands, with Kafka's names and validation, and the merge of a
 * topic's overrides over the broker's defaults into a {@link LogConfig}.
 */
public final class TopicConfigs {
    public static final String LEADER_REPLICATION_THROTTLED_REPLICAS = "leader.replication.throttled.replicas";
    public static final String FOLLOWER_REPLICATION_THROTTLED_REPLICAS = "follower.replication.throttled.replicas";

    /** Kafka's ThrottledReplicaListValidator: {@code *} alone, or {@code partitionId:brokerId} entries. */
    private static final ConfigDef.Validator THROTTLED_REPLICAS = (name, value) -> {
        List<?> entries = (List<?>) value;
        boolean star = entries.size() == 1 && "*".equals(String.valueOf(entries.getFirst()).trim());
        boolean pairs = entries.stream().allMatch(e -> String.valueOf(e).trim().matches("[0-9]+:[0-9]+"));
        if (!star && !pairs) {
            throw new ConfigException(name, value, name + " must be the literal '*' or a list of replicas in the "
                    + "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
        }
    };

    public static final ConfigDef DEF = new ConfigDef()
            .define("cleanup.policy", LIST, "delete", ConfigDef.ValidList.in("delete", "compact"), MEDIUM, "delete and/or compact")
            .define("compression.type", STRING, "producer", ConfigDef.ValidString.in("producer"), MEDIUM,
                    "Only 'producer' (batches are stored as the producer compressed them)")
            .define("delete.retention.ms", LONG, 86_400_000L, atLeast(0), MEDIUM, "Tombstone retention")
            .define("file.delete.delay.ms", LONG, 60_000L, atLeast(0), MEDIUM, "Delay before file deletion")
            .define("flush.messages", LONG, Long.MAX_VALUE, atLeast(1), MEDIUM, "fsync interval in records")
            .define("flush.ms", LONG, Long.MAX_VALUE, atLeast(0), MEDIUM, "fsync interval in ms")
            .define(FOLLOWER_REPLICATION_THROTTLED_REPLICAS, LIST, "", THROTTLED_REPLICAS, MEDIUM,
                    "Replicas whose re-replication is throttled on the follower side: '*' or partitionId:brokerId,...")
            .define("index.interval.bytes", INT, 4096, atLeast(0), MEDIUM, "Index density")
            .define(LEADER_REPLICATION_THROTTLED_REPLICAS, LIST, "", THROTTLED_REPLICAS, MEDIUM,
                    "Replicas whose re-replication is throttled on the leader side: '*' or partitionId:brokerId,...")
            .define("max.compaction.lag.ms", LONG, Long.MAX_VALUE, atLeast(1), MEDIUM, "Maximum compaction lag")
            .define("max.message.bytes", INT, 1024 * 1024 + 12, atLeast(0), MEDIUM, "Largest record batch")
            .define("message.timestamp.type", STRING, "CreateTime", ConfigDef.ValidString.in("CreateTime", "LogAppendTime"), MEDIUM, "Timestamp type")
            .define("message.timestamp.before.max.ms", LONG, Long.MAX_VALUE, atLeast(0), MEDIUM, "Allowed timestamp skew into the past")
            .define("message.timestamp.after.max.ms", LONG, 3_600_000L, atLeast(0), MEDIUM, "Allowed timestamp skew into the future")
            .define("min.cleanable.dirty.ratio", DOUBLE, 0.5, between(0, 1), MEDIUM, "Dirty ratio that triggers cleaning")
            .define("min.compaction.lag.ms", LONG, 0L, atLeast(0), MEDIUM, "Minimum compaction lag")
            .define("min.insync.replicas", INT, 1, atLeast(1), MEDIUM, "Minimum in-sync replicas for acks=all")
            .define("preallocate", BOOLEAN, false, MEDIUM, "Preallocate segment files")
            .define("retention.bytes", LONG, -1L, MEDIUM, "Retention size")
            .define("retention.ms", LONG, 604_800_000L, atLeast(-1), MEDIUM, "Retention time")
            .define("segment.bytes", INT, 1 << 30, atLeast(14), MEDIUM, "Segment size")
            .define("segment.index.bytes", INT, 10 * 1024 * 1024, atLeast(4), MEDIUM, "Index size")
            .define("segment.jitter.ms", LONG, 0L, atLeast(0), MEDIUM, "Roll jitter")
            .define("segment.ms", LONG, 604_800_000L, atLeast(1), MEDIUM, "Segment age before roll")
            .define("unclean.leader.election.enable", BOOLEAN, false, MEDIUM, "Unclean leader election");

    private TopicConfigs() {
    }

    public static boolean isKnown(String name) {
        return DEF.names().contains(name);
    }

    /** Checks a topic's overrides; throws {@link InvalidConfigurationException} naming the key and the reason. */
    public static void validate(Map<String, String> overrides) {
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            if (!isKnown(e.getKey())) {
                throw new InvalidConfigurationException("Unknown topic config name: " + e.getKey());
            }
            if (e.getValue() == null) {
                throw new InvalidConfigurationException("Null value not supported for topic configs: " + e.getKey());
            }
        }
        try {
            DEF.parse(overrides);
        } catch (ConfigException e) {
            throw new InvalidConfigurationException(e.getMessage());
        }
    }

    /** The effective value of every topic config: the override, else the broker default, else Kafka's default. */
    public static Map<String, Object> effective(Map<String, String> brokerDefaults, Map<String, String> overrides) {
        Map<String, String> merged = new HashMap<>();
        for (String name : DEF.names()) {
            String v = overrides.get(name);
            if (v == null) {
                v = brokerDefaults.get(name);
            }
            if (v != null) {
                merged.put(name, v);
            }
        }
        return DEF.parse(merged);
    }

    @SuppressWarnings("unchecked")
    public static LogConfig toLogConfig(Map<String, String> brokerDefaults, Map<String, String> overrides) {
        Map<String, Object> v = effective(brokerDefaults, overrides);
        List<String> policy = (List<String>) v.get("cleanup.policy");
        return new LogConfig(
                (Integer) v.get("segment.bytes"),
                (Long) v.get("segment.ms"),
                (Integer) v.get("segment.index.bytes"),
                (Integer) v.get("index.interval.bytes"),
                (Long) v.get("retention.ms"),
                (Long) v.get("retention.bytes"),
                policy.contains("delete"),
                policy.contains("compact"),
                (Long) v.get("delete.retention.ms"),
                (Long) v.get("min.compaction.lag.ms"),
                (Double) v.get("min.cleanable.dirty.ratio"),
                (Long) v.get("flush.messages"),
                (Long) v.get("flush.ms"),
                (Integer) v.get("max.message.bytes"),
                "LogAppendTime".equals(v.get("message.timestamp.type")),
                (Long) v.get("file.delete.delay.ms"));
    }

    public static int minInsyncReplicas(Map<String, String> brokerDefaults, Map<String, String> overrides) {
        return (Integer) effective(brokerDefaults, overrides).get("min.insync.replicas");
    }

    /**
     * Whether the topic's {@code key} (one of the {@code *.replication.throttled.replicas}) lists
     * {@code partition} on {@code brokerId}, or is {@code *}.
     */
    public static boolean throttledReplica(Map<String, String> overrides, String key, int partition, int brokerId) {
        String v = overrides.get(key);
        if (v == null || v.isBlank()) {
            return false;
        }
        String wanted = partition + ":" + brokerId;
        for (String entry : v.split(",")) {
            String e = entry.trim();
            if (e.equals("*") || e.equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    /** Renders a parsed value the way Kafka's DescribeConfigs shows it. */
    public static String render(Object value) {
        if (value instanceof List<?> list) {
            return String.join(",", list.stream().map(String::valueOf).toList());
        }
        return value == null ? null : String.valueOf(value);
    }
}
