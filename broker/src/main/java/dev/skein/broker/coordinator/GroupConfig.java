package dev.skein.broker.coordinator;

/**
 * Settings of the classic group coordinator, named as Kafka's broker configs are
 * ({@code group.min.session.timeout.ms}, {@code group.max.session.timeout.ms},
 * {@code group.initial.rebalance.delay.ms}, {@code group.max.size}, {@code offsets.retention.minutes}
 * in ms, {@code offsets.retention.check.interval.ms}). Invalid values fail at construction with the
 * key, the value and why.
 */
public record GroupConfig(
        int groupMinSessionTimeoutMs,
        int groupMaxSessionTimeoutMs,
        int groupInitialRebalanceDelayMs,
        int groupMaxSize,
        long offsetsRetentionMs,
        long offsetsRetentionCheckIntervalMs) {

    public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "group.min.session.timeout.ms";
    public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "group.max.session.timeout.ms";
    public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "group.initial.rebalance.delay.ms";
    public static final String GROUP_MAX_SIZE = "group.max.size";
    public static final String OFFSETS_RETENTION_MS = "offsets.retention.ms";
    public static final String OFFSETS_RETENTION_CHECK_INTERVAL_MS = "offsets.retention.check.interval.ms";

    /** Kafka's maximum length of the metadata string of a committed offset ({@code offset.metadata.max.bytes}). */
    public static final int OFFSET_METADATA_MAX_SIZE = 4096;

    /** How long a new member's parked JoinGroup may wait before it is dropped (Kafka's 5 minutes). */
    public static final int NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

    public GroupConfig {
        require(groupMinSessionTimeoutMs >= 0, GROUP_MIN_SESSION_TIMEOUT_MS, groupMinSessionTimeoutMs, "must be >= 0");
        require(groupMaxSessionTimeoutMs >= groupMinSessionTimeoutMs, GROUP_MAX_SESSION_TIMEOUT_MS,
                groupMaxSessionTimeoutMs, "must be >= " + GROUP_MIN_SESSION_TIMEOUT_MS);
        require(groupInitialRebalanceDelayMs >= 0, GROUP_INITIAL_REBALANCE_DELAY_MS, groupInitialRebalanceDelayMs, "must be >= 0");
        require(groupMaxSize >= 1, GROUP_MAX_SIZE, groupMaxSize, "must be >= 1");
        require(offsetsRetentionMs >= 1, OFFSETS_RETENTION_MS, offsetsRetentionMs, "must be >= 1");
        require(offsetsRetentionCheckIntervalMs >= 1, OFFSETS_RETENTION_CHECK_INTERVAL_MS,
                offsetsRetentionCheckIntervalMs, "must be >= 1");
    }

    /** Kafka's defaults: 6 s, 30 min, 3 s, unbounded, 7 days, 10 min. */
    public static GroupConfig defaults() {
        return new GroupConfig(6000, 1_800_000, 3000, Integer.MAX_VALUE, 7L * 24 * 60 * 60 * 1000, 600_000L);
    }

    private static void require(boolean ok, String key, long value, String why) {
        if (!ok) {
            throw new IllegalArgumentException("Invalid value " + value + " for " + key + ": " + why);
        }
    }
}
