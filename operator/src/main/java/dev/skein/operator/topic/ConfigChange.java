package dev.skein.operator.topic;

/** One topic config to set or to remove (back to the cluster's default). */
public record ConfigChange(String key, Op op, String value) {
    public enum Op { SET, DELETE }

    public static ConfigChange set(String key, String value) {
        return new ConfigChange(key, Op.SET, value);
    }

    public static ConfigChange delete(String key) {
        return new ConfigChange(key, Op.DELETE, null);
    }
}
