package dev.skein.broker.replication;

import dev.skein.broker.config.BrokerConfig;

import java.util.Map;

/**
 * The broker settings replication runs by, typed, with Kafka's names and defaults (declared once
 * in {@link BrokerConfig#DEF}).
 *
 * @param replicaLagTimeMaxMs     a follower not caught up for this long leaves the ISR
 * @param fetchWaitMaxMs          follower fetch long-poll
 * @param fetchMinBytes           follower fetch minimum bytes
 * @param fetchMaxBytes           bytes per partition per follower fetch
 * @param fetchResponseMaxBytes   bytes per follower fetch response
 * @param fetchBackoffMs          pause after a failed follower fetch
 * @param socketTimeoutMs         a follower fetch that takes longer than its wait plus this is abandoned
 * @param socketReceiveBufferBytes SO_RCVBUF of a follower's connection to its leader, -1 for the operating system's
 */
public record ReplicationConfig(long replicaLagTimeMaxMs, int fetchWaitMaxMs, int fetchMinBytes, int fetchMaxBytes,
                                int fetchResponseMaxBytes, int fetchBackoffMs, int socketTimeoutMs,
                                int socketReceiveBufferBytes) {

    public static ReplicationConfig defaults() {
        return from(Map.of());
    }

    public static ReplicationConfig from(BrokerConfig config) {
        return from(config.originals());
    }

    private static ReplicationConfig from(Map<String, String> props) {
        Map<String, Object> v = BrokerConfig.DEF.parse(props);
        return new ReplicationConfig(
                (Long) v.get(BrokerConfig.REPLICA_LAG_TIME_MAX_MS),
                (Integer) v.get(BrokerConfig.REPLICA_FETCH_WAIT_MAX_MS),
                (Integer) v.get(BrokerConfig.REPLICA_FETCH_MIN_BYTES),
                (Integer) v.get(BrokerConfig.REPLICA_FETCH_MAX_BYTES),
                (Integer) v.get(BrokerConfig.REPLICA_FETCH_RESPONSE_MAX_BYTES),
                (Integer) v.get(BrokerConfig.REPLICA_FETCH_BACKOFF_MS),
                (Integer) v.get(BrokerConfig.REPLICA_SOCKET_TIMEOUT_MS),
                (Integer) v.get(BrokerConfig.REPLICA_SOCKET_RECEIVE_BUFFER_BYTES));
    }
}
