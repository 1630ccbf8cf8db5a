package dev.skein.broker.config;

import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The broker configs that may change at run time (IncrementalAlterConfigs / AlterConfigs on the
 * BROKER resource), kept in the replicated metadata per broker id or as the cluster-wide default
 * (resource name ""). Every other broker config is static: set in server.properties. The effective
 * value for a broker is its own override, else the cluster default, else the static config.
 */
public final class DynamicBrokerConfigs {
    /** Keys that may be altered at run time, with Kafka's names. */
    public static final Set<String> DYNAMIC = Set.of(
            BrokerConfig.LEADER_REPLICATION_THROTTLED_RATE,
            BrokerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE);

    private DynamicBrokerConfigs() {
    }

    public static boolean isDynamic(String key) {
        return DYNAMIC.contains(key);
    }

    /** A broker config resource is "" (the cluster-wide default) or a broker id. */
    public static void validateResource(String resource) {
        if (resource == null) {
            throw new InvalidRequestException("A broker config resource needs a name: a broker id or \"\" for the default");
        }
        if (resource.isEmpty()) {
            return;
        }
        try {
            if (Integer.parseInt(resource) >= 0) {
                return;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new InvalidRequestException("Invalid broker config resource name '" + resource
                + "': expected a broker id or \"\" for the cluster-wide default");
    }

    /**
     * Checks a broker resource's complete set of dynamic overrides: only {@link #DYNAMIC} keys, each
     * a positive long (bytes per second).
     *
     * @throws InvalidConfigurationException naming the keys that cannot change or the bad value
     */
    public static void validate(Map<String, String> configs) {
        Set<String> notDynamic = new TreeSet<>();
        for (String key : configs.keySet()) {
            if (!isDynamic(key)) {
                notDynamic.add(key);
            }
        }
        if (!notDynamic.isEmpty()) {
            throw new InvalidConfigurationException("Cannot update these configs dynamically: " + notDynamic
                    + " (Skein changes only " + new TreeSet<>(DYNAMIC) + " at run time; set the others in server.properties)");
        }
        for (Map.Entry<String, String> e : configs.entrySet()) {
            parseRate(e.getKey(), e.getValue());
        }
    }

    private static long parseRate(String key, String value) {
        long v;
        try {
            v = Long.parseLong(value == null ? "" : value.trim());
        } catch (NumberFormatException e) {
            throw new InvalidConfigurationException("Invalid value " + value + " for configuration " + key
                    + ": Not a number of type LONG");
        }
        if (v <= 0) {
            throw new InvalidConfigurationException("Invalid value " + value + " for configuration " + key
                    + ": Value must be at least 1");
        }
        return v;
    }

    /** The effective bytes/s of a throttle rate for {@code brokerId}: dynamic override, cluster default, else static. */
    public static long rate(ClusterImage image, BrokerConfig config, int brokerId, String key) {
        String dynamic = image.dynamicBrokerConfig(brokerId, key);
        if (dynamic != null) {
            return parseRate(key, dynamic);
        }
        String configured = config.originals().get(key);
        return configured == null ? Long.MAX_VALUE : Long.parseLong(configured.trim());
    }
}
