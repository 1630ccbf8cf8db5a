package dev.skein.broker.config;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.apache.kafka.common.config.ConfigDef.Importance.HIGH;
import static org.apache.kafka.common.config.ConfigDef.Importance.LOW;
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
 * The broker's static configuration, read from a Kafka-style {@code server.properties}.
 *
 * <p>Every key Skein understands is declared once in {@link #DEF} with Kafka's name, default and
 * meaning; a bad value fails start-up with the key, the value and the reason. Keys that Kafka knows
 * but Skein does not use (for example {@code transaction.state.log.replication.factor}) are
 * reported once by {@link #ignoredKeys()} and otherwise ignored, so a Kafka KRaft combined-mode
 * file starts a Skein broker unchanged.
 */
public final class BrokerConfig {
    private static final Logger log = LoggerFactory.getLogger(BrokerConfig.class);

    public static final String NODE_ID = "node.id";
    public static final String BROKER_ID = "broker.id";
    public static final String PROCESS_ROLES = "process.roles";
    public static final String CONTROLLER_QUORUM_VOTERS = "controller.quorum.voters";
    public static final String CONTROLLER_QUORUM_BOOTSTRAP_SERVERS = "controller.quorum.bootstrap.servers";
    public static final String CONTROLLER_LISTENER_NAMES = "controller.listener.names";
    public static final String LISTENERS = "listeners";
    public static final String ADVERTISED_LISTENERS = "advertised.listeners";
    public static final String LISTENER_SECURITY_PROTOCOL_MAP = "listener.security.protocol.map";
    public static final String INTER_BROKER_LISTENER_NAME = "inter.broker.listener.name";
    public static final String BROKER_RACK = "broker.rack";
    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";
    public static final String NUM_PARTITIONS = "num.partitions";
    public static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    public static final String AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable";
    public static final String DELETE_TOPIC_ENABLE = "delete.topic.enable";
    public static final String LOG_SEGMENT_BYTES = "log.segment.bytes";
    public static final String LOG_ROLL_MS = "log.roll.ms";
    public static final String LOG_ROLL_HOURS = "log.roll.hours";
    public static final String LOG_RETENTION_MS = "log.retention.ms";
    public static final String LOG_RETENTION_MINUTES = "log.retention.minutes";
    public static final String LOG_RETENTION_HOURS = "log.retention.hours";
    public static final String LOG_RETENTION_BYTES = "log.retention.bytes";
    public static final String LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms";
    public static final String LOG_CLEANUP_POLICY = "log.cleanup.policy";
    public static final String LOG_CLEANER_ENABLE = "log.cleaner.enable";
    public static final String LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms";
    public static final String LOG_CLEANER_DELETE_RETENTION_MS = "log.cleaner.delete.retention.ms";
    public static final String LOG_CLEANER_MIN_COMPACTION_LAG_MS = "log.cleaner.min.compaction.lag.ms";
    public static final String LOG_CLEANER_MIN_CLEANABLE_RATIO = "log.cleaner.min.cleanable.ratio";
    public static final String LOG_FLUSH_INTERVAL_MESSAGES = "log.flush.interval.messages";
    public static final String LOG_FLUSH_INTERVAL_MS = "log.flush.interval.ms";
    public static final String LOG_FLUSH_SCHEDULER_INTERVAL_MS = "log.flush.scheduler.interval.ms";
    public static final String REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = "replica.high.watermark.checkpoint.interval.ms";
    public static final String LOG_INDEX_SIZE_MAX_BYTES = "log.index.size.max.bytes";
    public static final String LOG_INDEX_INTERVAL_BYTES = "log.index.interval.bytes";
    public static final String LOG_MESSAGE_TIMESTAMP_TYPE = "log.message.timestamp.type";
    public static final String LOG_SEGMENT_DELETE_DELAY_MS = "log.segment.delete.delay.ms";
    public static final String MESSAGE_MAX_BYTES = "message.max.bytes";
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    public static final String SOCKET_SEND_BUFFER_BYTES = "socket.send.buffer.bytes";
    public static final String SOCKET_RECEIVE_BUFFER_BYTES = "socket.receive.buffer.bytes";
    public static final String NUM_NETWORK_THREADS = "num.network.threads";
    public static final String NUM_IO_THREADS = "num.io.threads";
    public static final String MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS = "max.incremental.fetch.session.cache.slots";
    public static final String OFFSETS_TOPIC_NUM_PARTITIONS = "offsets.topic.num.partitions";
    public static final String OFFSETS_TOPIC_REPLICATION_FACTOR = "offsets.topic.replication.factor";
    public static final String OFFSETS_TOPIC_SEGMENT_BYTES = "offsets.topic.segment.bytes";
    public static final String OFFSETS_RETENTION_MINUTES = "offsets.retention.minutes";
    public static final String OFFSETS_RETENTION_CHECK_INTERVAL_MS = "offsets.retention.check.interval.ms";
    public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "group.initial.rebalance.delay.ms";
    public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "group.min.session.timeout.ms";
    public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "group.max.session.timeout.ms";
    public static final String GROUP_MAX_SIZE = "group.max.size";
    public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
    public static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";
    public static final String BROKER_SESSION_TIMEOUT_MS = "broker.session.timeout.ms";
    public static final String CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS = "controller.quorum.request.timeout.ms";
    public static final String BROKER_HEARTBEAT_INTERVAL_MS = "broker.heartbeat.interval.ms";
    public static final String AUTO_LEADER_REBALANCE_ENABLE = "auto.leader.rebalance.enable";
    public static final String LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS = "leader.imbalance.check.interval.seconds";
    public static final String REPLICA_FETCH_MAX_BYTES = "replica.fetch.max.bytes";
    public static final String REPLICA_FETCH_RESPONSE_MAX_BYTES = "replica.fetch.response.max.bytes";
    public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
    public static final String REPLICA_FETCH_MIN_BYTES = "replica.fetch.min.bytes";
    public static final String REPLICA_FETCH_BACKOFF_MS = "replica.fetch.backoff.ms";
    public static final String NUM_REPLICA_FETCHERS = "num.replica.fetchers";
    public static final String REPLICA_SOCKET_TIMEOUT_MS = "replica.socket.timeout.ms";
    public static final String REPLICA_SOCKET_RECEIVE_BUFFER_BYTES = "replica.socket.receive.buffer.bytes";
    public static final String LEADER_REPLICATION_THROTTLED_RATE = "leader.replication.throttled.rate";
    public static final String FOLLOWER_REPLICATION_THROTTLED_RATE = "follower.replication.throttled.rate";
    public static final String HTTP_PORT = "skein.http.port";
    public static final String INLINE_REQUESTS = "skein.network.inline.requests";
    public static final String CLUSTER_ID = "skein.cluster.id";

    /**
     * A socket buffer size as Kafka takes it: -1 for the operating system's default, else bytes.
     * Kafka accepts any number and fails on the first connection for 0 or less than -1; Skein
     * refuses such a value at start.
     */
    private static final ConfigDef.Validator BUFFER_BYTES = new ConfigDef.Validator() {
        @Override
        public void ensureValid(String name, Object value) {
            if (value != null && (Integer) value != -1 && (Integer) value < 1) {
                throw new ConfigException(name, value, "must be -1 (the operating system's default) or a size in bytes of at least 1");
            }
        }

        @Override
        public String toString() {
            return "-1 or [1,...]";
        }
    };

    public static final ConfigDef DEF = new ConfigDef()
            .define(NODE_ID, INT, -1, HIGH, "The node id of this server (the StatefulSet ordinal on Kubernetes).")
            .define(BROKER_ID, INT, -1, LOW, "Legacy alias of node.id.")
            .define(PROCESS_ROLES, LIST, "broker,controller", HIGH, "Roles of this process: broker, controller or both.")
            .define(CONTROLLER_QUORUM_VOTERS, LIST, "", HIGH, "Controller voters as id@host:port.")
            .define(CONTROLLER_QUORUM_BOOTSTRAP_SERVERS, LIST, "", LOW, "Controller bootstrap servers (dynamic quorum).")
            .define(CONTROLLER_LISTENER_NAMES, LIST, "CONTROLLER", HIGH, "Names of the listeners used by the controller.")
            .define(LISTENERS, LIST, "PLAINTEXT://:9092", HIGH, "Listeners as NAME://host:port.")
            .define(ADVERTISED_LISTENERS, LIST, null, HIGH, "Listeners given to clients; defaults to listeners.")
            .define(LISTENER_SECURITY_PROTOCOL_MAP, LIST,
                    "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
                    MEDIUM, "Listener name to security protocol.")
            .define(INTER_BROKER_LISTENER_NAME, STRING, null, MEDIUM, "Listener used between brokers.")
            .define(BROKER_RACK, STRING, null, MEDIUM, "Rack of this broker.")
            .define(LOG_DIRS, LIST, null, HIGH, "Directories holding the log data.")
            .define(LOG_DIR, STRING, "/tmp/kafka-logs", HIGH, "The log directory when log.dirs is not set.")
            .define(NUM_PARTITIONS, INT, 1, atLeast(1), MEDIUM, "Default partition count of new topics.")
            .define(DEFAULT_REPLICATION_FACTOR, INT, 1, atLeast(1), MEDIUM, "Default replication factor of new topics.")
            .define(MIN_INSYNC_REPLICAS, INT, 1, atLeast(1), HIGH, "Default min.insync.replicas of topics.")
            .define(AUTO_CREATE_TOPICS_ENABLE, BOOLEAN, true, HIGH, "Create topics on metadata requests for unknown topics.")
            .define(DELETE_TOPIC_ENABLE, BOOLEAN, true, HIGH, "Allow topic deletion.")
            .define(LOG_SEGMENT_BYTES, INT, 1 << 30, atLeast(14), HIGH, "Segment size.")
            .define(LOG_ROLL_MS, LONG, null, MEDIUM, "Roll a segment after this time.")
            .define(LOG_ROLL_HOURS, INT, 168, atLeast(1), HIGH, "Roll a segment after this many hours.")
            .define(LOG_RETENTION_MS, LONG, null, HIGH, "Retention time; -1 keeps forever.")
            .define(LOG_RETENTION_MINUTES, INT, null, HIGH, "Retention time in minutes.")
            .define(LOG_RETENTION_HOURS, INT, 168, HIGH, "Retention time in hours.")
            .define(LOG_RETENTION_BYTES, LONG, -1L, HIGH, "Retention size per partition; -1 = unlimited.")
            .define(LOG_RETENTION_CHECK_INTERVAL_MS, LONG, 300_000L, atLeast(1), MEDIUM, "How often retention runs.")
            .define(LOG_CLEANUP_POLICY, LIST, "delete", ConfigDef.ValidList.in("delete", "compact"), MEDIUM, "Default cleanup policy.")
            .define(LOG_CLEANER_ENABLE, BOOLEAN, true, MEDIUM, "Run the log cleaner for compacted topics.")
            .define(LOG_CLEANER_BACKOFF_MS, LONG, 15_000L, atLeast(0), MEDIUM, "Sleep of the cleaner when idle.")
            .define(LOG_CLEANER_DELETE_RETENTION_MS, LONG, 86_400_000L, atLeast(0), MEDIUM, "Tombstone retention.")
            .define(LOG_CLEANER_MIN_COMPACTION_LAG_MS, LONG, 0L, atLeast(0), MEDIUM, "Minimum age before compaction.")
            .define(LOG_CLEANER_MIN_CLEANABLE_RATIO, DOUBLE, 0.5, between(0, 1), MEDIUM, "Minimum dirty ratio.")
            .define(LOG_FLUSH_INTERVAL_MESSAGES, LONG, Long.MAX_VALUE, atLeast(1), HIGH, "fsync after this many records.")
            .define(LOG_FLUSH_INTERVAL_MS, LONG, null, HIGH, "fsync after this time.")
            .define(LOG_FLUSH_SCHEDULER_INTERVAL_MS, LONG, Long.MAX_VALUE, HIGH, "How often the flusher checks.")
            .define(REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, LONG, 5000L, atLeast(1), HIGH,
                    "How often the high watermarks are saved to disk (replication-offset-checkpoint in each log dir).")
            .define(LOG_INDEX_SIZE_MAX_BYTES, INT, 10 * 1024 * 1024, atLeast(4), MEDIUM, "Maximum index file size.")
            .define(LOG_INDEX_INTERVAL_BYTES, INT, 4096, atLeast(0), MEDIUM, "Bytes between index entries.")
            .define(LOG_MESSAGE_TIMESTAMP_TYPE, STRING, "CreateTime", ConfigDef.ValidString.in("CreateTime", "LogAppendTime"), MEDIUM, "Timestamp type.")
            .define(LOG_SEGMENT_DELETE_DELAY_MS, LONG, 60_000L, atLeast(0), LOW, "Delay before deleting a file.")
            .define(MESSAGE_MAX_BYTES, INT, 1024 * 1024 + 12, atLeast(0), HIGH, "Largest record batch.")
            .define(SOCKET_REQUEST_MAX_BYTES, INT, 100 * 1024 * 1024, atLeast(1), HIGH, "Largest request frame.")
            .define(SOCKET_SEND_BUFFER_BYTES, INT, 100 * 1024, BUFFER_BYTES, HIGH,
                    "SO_SNDBUF of the Kafka listener's connections; -1 leaves it to the operating system, which"
                    + " grows it with the connection (Linux's autotuning).")
            .define(SOCKET_RECEIVE_BUFFER_BYTES, INT, 100 * 1024, BUFFER_BYTES, HIGH,
                    "SO_RCVBUF of the Kafka listener's connections, set on the listening socket so that the TCP"
                    + " handshake already offers it; -1 leaves it to the operating system.")
            .define(NUM_NETWORK_THREADS, INT, 3, atLeast(1), HIGH, "Network (event loop) threads.")
            .define(NUM_IO_THREADS, INT, 8, atLeast(1), HIGH, "Request handler threads.")
            .define(INLINE_REQUESTS, BOOLEAN, true, MEDIUM, "Produce and Fetch are handled on the network thread"
                    + " that read them, not handed to a request handler thread and back (two thread wake-ups less"
                    + " per request). Turn off if appends can block for long: topics with flush.messages=1 on a"
                    + " slow disk hold up the other connections of that network thread for every fsync.")
            .define(MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS, INT, 1000, atLeast(0), MEDIUM,
                    "Incremental fetch sessions (KIP-227) kept at once; 0 offers none, so every fetch is a full one.")
            .define(OFFSETS_TOPIC_NUM_PARTITIONS, INT, 50, atLeast(1), HIGH, "Partitions of __consumer_offsets.")
            .define(OFFSETS_TOPIC_REPLICATION_FACTOR, INT, 3, atLeast(1), HIGH, "Replication factor of __consumer_offsets.")
            .define(OFFSETS_TOPIC_SEGMENT_BYTES, INT, 100 * 1024 * 1024, atLeast(1), HIGH, "Segment size of __consumer_offsets.")
            .define(OFFSETS_RETENTION_MINUTES, INT, 7 * 24 * 60, atLeast(1), HIGH, "Committed offsets retention.")
            .define(OFFSETS_RETENTION_CHECK_INTERVAL_MS, LONG, 600_000L, atLeast(1), HIGH, "Offset expiry check interval.")
            .define(GROUP_INITIAL_REBALANCE_DELAY_MS, INT, 3000, atLeast(0), MEDIUM, "Delay of the first rebalance.")
            .define(GROUP_MIN_SESSION_TIMEOUT_MS, INT, 6000, MEDIUM, "Minimum session timeout.")
            .define(GROUP_MAX_SESSION_TIMEOUT_MS, INT, 1_800_000, MEDIUM, "Maximum session timeout.")
            .define(GROUP_MAX_SIZE, INT, Integer.MAX_VALUE, atLeast(1), MEDIUM, "Maximum members per group.")
            .define(REPLICA_LAG_TIME_MAX_MS, LONG, 30_000L, MEDIUM, "Follower lag before it leaves the ISR.")
            .define(UNCLEAN_LEADER_ELECTION_ENABLE, BOOLEAN, false, HIGH, "Allow out-of-sync replicas to lead.")
            .define(BROKER_SESSION_TIMEOUT_MS, INT, 9000, atLeast(1), HIGH, "A broker without a heartbeat for this long is fenced.")
            .define(CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS, INT, 5000, atLeast(100), MEDIUM,
                    "How long a node keeps sending a request to the active controller (again after a leader change) before it answers a retriable error.")
            .define(BROKER_HEARTBEAT_INTERVAL_MS, INT, 2000, atLeast(1), MEDIUM, "How often a broker heartbeats to the controller.")
            .define(AUTO_LEADER_REBALANCE_ENABLE, BOOLEAN, true, HIGH, "Move leadership back to preferred replicas.")
            .define(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS, LONG, 300L, atLeast(1), HIGH, "How often leader imbalance is checked.")
            .define(REPLICA_FETCH_MAX_BYTES, INT, 1024 * 1024, atLeast(0), MEDIUM, "Bytes a follower fetches per partition.")
            .define(REPLICA_FETCH_RESPONSE_MAX_BYTES, INT, 10 * 1024 * 1024, atLeast(0), MEDIUM, "Bytes a follower fetches per request.")
            .define(REPLICA_FETCH_WAIT_MAX_MS, INT, 500, atLeast(0), MEDIUM, "Follower fetch long-poll.")
            .define(REPLICA_FETCH_MIN_BYTES, INT, 1, atLeast(1), MEDIUM, "Follower fetch minimum bytes.")
            .define(REPLICA_FETCH_BACKOFF_MS, INT, 1000, atLeast(0), MEDIUM, "Back-off after a failed follower fetch.")
            .define(NUM_REPLICA_FETCHERS, INT, 1, atLeast(1), HIGH, "Fetcher threads per source broker.")
            .define(REPLICA_SOCKET_TIMEOUT_MS, INT, 30_000, atLeast(1), HIGH, "Follower fetch request timeout.")
            .define(REPLICA_SOCKET_RECEIVE_BUFFER_BYTES, INT, 64 * 1024, BUFFER_BYTES, HIGH,
                    "SO_RCVBUF of a follower's connection to its leader; -1 leaves it to the operating system.")
            .define(LEADER_REPLICATION_THROTTLED_RATE, LONG, Long.MAX_VALUE, atLeast(1), MEDIUM, "Leader-side re-replication throttle, bytes/s.")
            .define(FOLLOWER_REPLICATION_THROTTLED_RATE, LONG, Long.MAX_VALUE, atLeast(1), MEDIUM, "Follower-side re-replication throttle, bytes/s.")
            .define(HTTP_PORT, INT, 9644, between(-1, 65535), MEDIUM,
                    "Port of the HTTP server with /metrics, /healthz and /readyz; 0 picks a free port, -1 disables it.")
            .define(CLUSTER_ID, STRING, null, LOW, "Cluster id written when the log dir is first formatted.");

    private final Map<String, String> originals;
    private final Map<String, Object> values;
    private final Set<String> ignoredKeys;

    public BrokerConfig(Map<String, String> props) {
        Map<String, String> resolved = ConfigProviders.resolve(props);
        this.originals = Map.copyOf(resolved);
        this.values = DEF.parse(resolved);
        Set<String> ignored = new TreeSet<>(resolved.keySet());
        ignored.removeAll(DEF.names());
        ignored.removeIf(ConfigProviders::isProviderKey);
        this.ignoredKeys = Set.copyOf(ignored);
        validate();
    }

    /** Logs each key Skein does not use, once. */
    public void logIgnoredKeys() {
        for (String key : ignoredKeys) {
            log.info("Ignoring config {}: Skein does not use it", key);
        }
    }

    public Set<String> ignoredKeys() {
        return ignoredKeys;
    }

    public Map<String, String> originals() {
        return originals;
    }

    private void validate() {
        if (nodeId() < 0) {
            throw new ConfigException(NODE_ID, values.get(NODE_ID), "must be set to a non-negative id");
        }
        for (Listener l : listeners()) {
            String protocol = securityProtocol(l.name());
            if (!"PLAINTEXT".equals(protocol)) {
                throw new ConfigException(LISTENERS, l.toString(),
                        "listener " + l.name() + " uses security protocol " + protocol + "; Skein supports PLAINTEXT only");
            }
        }
        if (brokerListener() == null) {
            throw new ConfigException(LISTENERS, values.get(LISTENERS), "needs a listener that is not one of "
                    + CONTROLLER_LISTENER_NAMES + " " + controllerListenerNames());
        }
        if (logDirs().isEmpty()) {
            throw new ConfigException(LOG_DIRS, values.get(LOG_DIRS), "needs at least one directory");
        }
    }

    private Object get(String key) {
        return values.get(key);
    }

    public int nodeId() {
        int id = (Integer) get(NODE_ID);
        return id >= 0 ? id : (Integer) get(BROKER_ID);
    }

    @SuppressWarnings("unchecked")
    public List<String> processRoles() {
        return (List<String>) get(PROCESS_ROLES);
    }

    @SuppressWarnings("unchecked")
    public List<String> controllerQuorumVoters() {
        return (List<String>) get(CONTROLLER_QUORUM_VOTERS);
    }

    @SuppressWarnings("unchecked")
    public List<String> controllerListenerNames() {
        return (List<String>) get(CONTROLLER_LISTENER_NAMES);
    }

    @SuppressWarnings("unchecked")
    public List<Listener> listeners() {
        return Listener.parseAll(LISTENERS, (List<String>) get(LISTENERS));
    }

    /** The client-facing listener (the first one that is not a controller listener). */
    public Listener brokerListener() {
        String interBroker = (String) get(INTER_BROKER_LISTENER_NAME);
        Listener first = null;
        for (Listener l : listeners()) {
            if (controllerListenerNames().contains(l.name())) {
                continue;
            }
            if (interBroker != null && interBroker.equals(l.name())) {
                return l;
            }
            if (first == null) {
                first = l;
            }
        }
        return first;
    }

    /** The listener clients are told to connect to, for the broker listener's name. */
    @SuppressWarnings("unchecked")
    public Listener advertisedListener(int boundPort) {
        Listener broker = brokerListener();
        List<String> advertised = (List<String>) get(ADVERTISED_LISTENERS);
        if (advertised != null) {
            for (Listener l : Listener.parseAll(ADVERTISED_LISTENERS, advertised)) {
                if (l.name().equals(broker.name())) {
                    return l.port() == 0 ? new Listener(l.name(), l.host(), boundPort) : l;
                }
            }
        }
        String host = broker.host().isEmpty() || broker.host().equals("0.0.0.0") ? "localhost" : broker.host();
        return new Listener(broker.name(), host, boundPort);
    }

    @SuppressWarnings("unchecked")
    public String securityProtocol(String listenerName) {
        for (String entry : (List<String>) get(LISTENER_SECURITY_PROTOCOL_MAP)) {
            int colon = entry.indexOf(':');
            if (colon > 0 && entry.substring(0, colon).trim().equalsIgnoreCase(listenerName)) {
                return entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
            }
        }
        return listenerName.toUpperCase(Locale.ROOT);
    }

    /** The broker's rack, or null when none is set (an empty value, e.g. a missing zone label, is none). */
    public String rack() {
        String rack = (String) get(BROKER_RACK);
        return rack == null || rack.isBlank() ? null : rack.strip();
    }

    @SuppressWarnings("unchecked")
    public List<Path> logDirs() {
        List<String> dirs = (List<String>) get(LOG_DIRS);
        if (dirs == null) {
            dirs = List.of((String) get(LOG_DIR));
        }
        List<Path> paths = new ArrayList<>();
        for (String d : dirs) {
            if (!d.isBlank()) {
                paths.add(Path.of(d.trim()));
            }
        }
        return paths;
    }

    public int numPartitions() {
        return (Integer) get(NUM_PARTITIONS);
    }

    public int defaultReplicationFactor() {
        return (Integer) get(DEFAULT_REPLICATION_FACTOR);
    }

    public boolean autoCreateTopicsEnable() {
        return (Boolean) get(AUTO_CREATE_TOPICS_ENABLE);
    }

    public boolean deleteTopicEnable() {
        return (Boolean) get(DELETE_TOPIC_ENABLE);
    }

    public int messageMaxBytes() {
        return (Integer) get(MESSAGE_MAX_BYTES);
    }

    public int socketRequestMaxBytes() {
        return (Integer) get(SOCKET_REQUEST_MAX_BYTES);
    }

    /** SO_SNDBUF of the listener's connections, or -1 for the operating system's. */
    public int socketSendBufferBytes() {
        return (Integer) get(SOCKET_SEND_BUFFER_BYTES);
    }

    /** SO_RCVBUF of the listener's connections, or -1 for the operating system's. */
    public int socketReceiveBufferBytes() {
        return (Integer) get(SOCKET_RECEIVE_BUFFER_BYTES);
    }

    public int numNetworkThreads() {
        return (Integer) get(NUM_NETWORK_THREADS);
    }

    public boolean inlineRequests() {
        return (Boolean) get(INLINE_REQUESTS);
    }

    public int numIoThreads() {
        return (Integer) get(NUM_IO_THREADS);
    }

    public int maxIncrementalFetchSessionCacheSlots() {
        return (Integer) get(MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS);
    }

    public long logRetentionCheckIntervalMs() {
        return (Long) get(LOG_RETENTION_CHECK_INTERVAL_MS);
    }

    public boolean logCleanerEnable() {
        return (Boolean) get(LOG_CLEANER_ENABLE);
    }

    public long logCleanerBackoffMs() {
        return (Long) get(LOG_CLEANER_BACKOFF_MS);
    }

    public long replicaHighWatermarkCheckpointIntervalMs() {
        return (Long) get(REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS);
    }

    public long logFlushSchedulerIntervalMs() {
        return (Long) get(LOG_FLUSH_SCHEDULER_INTERVAL_MS);
    }

    public int offsetsTopicNumPartitions() {
        return (Integer) get(OFFSETS_TOPIC_NUM_PARTITIONS);
    }

    public int offsetsTopicSegmentBytes() {
        return (Integer) get(OFFSETS_TOPIC_SEGMENT_BYTES);
    }

    public long offsetsRetentionMs() {
        return (Integer) get(OFFSETS_RETENTION_MINUTES) * 60_000L;
    }

    public long offsetsRetentionCheckIntervalMs() {
        return (Long) get(OFFSETS_RETENTION_CHECK_INTERVAL_MS);
    }

    public int groupInitialRebalanceDelayMs() {
        return (Integer) get(GROUP_INITIAL_REBALANCE_DELAY_MS);
    }

    public int groupMinSessionTimeoutMs() {
        return (Integer) get(GROUP_MIN_SESSION_TIMEOUT_MS);
    }

    public int groupMaxSessionTimeoutMs() {
        return (Integer) get(GROUP_MAX_SESSION_TIMEOUT_MS);
    }

    public int groupMaxSize() {
        return (Integer) get(GROUP_MAX_SIZE);
    }

    public int httpPort() {
        return (Integer) get(HTTP_PORT);
    }

    public String clusterId() {
        return (String) get(CLUSTER_ID);
    }

    public int brokerSessionTimeoutMs() {
        return (Integer) get(BROKER_SESSION_TIMEOUT_MS);
    }

    public int controllerQuorumRequestTimeoutMs() {
        return (Integer) get(CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS);
    }

    public int brokerHeartbeatIntervalMs() {
        return (Integer) get(BROKER_HEARTBEAT_INTERVAL_MS);
    }

    public boolean autoLeaderRebalanceEnable() {
        return (Boolean) get(AUTO_LEADER_REBALANCE_ENABLE);
    }

    public long leaderImbalanceCheckIntervalSeconds() {
        return (Long) get(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS);
    }

    public int offsetsTopicReplicationFactor() {
        return (Integer) get(OFFSETS_TOPIC_REPLICATION_FACTOR);
    }

    /** The first listener named in {@code controller.listener.names}, or null if there is none. */
    public Listener controllerListener() {
        for (Listener l : listeners()) {
            if (controllerListenerNames().contains(l.name())) {
                return l;
            }
        }
        return null;
    }

    /**
     * The broker-level defaults of topic configs ({@code log.retention.ms} for {@code retention.ms}, ...),
     * keyed by the topic config name, with Kafka's precedence (ms over minutes over hours).
     */
    public Map<String, String> topicConfigDefaults() {
        Map<String, String> d = new HashMap<>();
        d.put("segment.bytes", String.valueOf(get(LOG_SEGMENT_BYTES)));
        Long rollMs = (Long) get(LOG_ROLL_MS);
        d.put("segment.ms", String.valueOf(rollMs != null ? rollMs : (Integer) get(LOG_ROLL_HOURS) * 3_600_000L));
        Long retentionMs = (Long) get(LOG_RETENTION_MS);
        Integer retentionMinutes = (Integer) get(LOG_RETENTION_MINUTES);
        long retention = retentionMs != null ? retentionMs
                : retentionMinutes != null ? retentionMinutes * 60_000L
                : (Integer) get(LOG_RETENTION_HOURS) * 3_600_000L;
        d.put("retention.ms", String.valueOf(retention < 0 ? -1 : retention));
        d.put("retention.bytes", String.valueOf(get(LOG_RETENTION_BYTES)));
        d.put("cleanup.policy", String.join(",", castList(get(LOG_CLEANUP_POLICY))));
        d.put("delete.retention.ms", String.valueOf(get(LOG_CLEANER_DELETE_RETENTION_MS)));
        d.put("min.compaction.lag.ms", String.valueOf(get(LOG_CLEANER_MIN_COMPACTION_LAG_MS)));
        d.put("min.cleanable.dirty.ratio", String.valueOf(get(LOG_CLEANER_MIN_CLEANABLE_RATIO)));
        d.put("flush.messages", String.valueOf(get(LOG_FLUSH_INTERVAL_MESSAGES)));
        Long flushMs = (Long) get(LOG_FLUSH_INTERVAL_MS);
        d.put("flush.ms", String.valueOf(flushMs != null ? flushMs : (Long) get(LOG_FLUSH_SCHEDULER_INTERVAL_MS)));
        d.put("segment.index.bytes", String.valueOf(get(LOG_INDEX_SIZE_MAX_BYTES)));
        d.put("index.interval.bytes", String.valueOf(get(LOG_INDEX_INTERVAL_BYTES)));
        d.put("message.timestamp.type", String.valueOf(get(LOG_MESSAGE_TIMESTAMP_TYPE)));
        d.put("file.delete.delay.ms", String.valueOf(get(LOG_SEGMENT_DELETE_DELAY_MS)));
        d.put("max.message.bytes", String.valueOf(get(MESSAGE_MAX_BYTES)));
        d.put("min.insync.replicas", String.valueOf(get(MIN_INSYNC_REPLICAS)));
        d.put("unclean.leader.election.enable", String.valueOf(get(UNCLEAN_LEADER_ELECTION_ENABLE)));
        return d;
    }

    @SuppressWarnings("unchecked")
    private static List<String> castList(Object o) {
        return (List<String>) o;
    }

    /** A listener {@code NAME://host:port}. */
    public record Listener(String name, String host, int port) {
        static List<Listener> parseAll(String key, List<String> specs) {
            List<Listener> out = new ArrayList<>();
            for (String spec : specs) {
                out.add(parse(key, spec.trim()));
            }
            return out;
        }

        static Listener parse(String key, String spec) {
            int sep = spec.indexOf("://");
            int colon = spec.lastIndexOf(':');
            if (sep <= 0 || colon <= sep) {
                throw new ConfigException(key, spec, "expected NAME://host:port");
            }
            String name = spec.substring(0, sep).toUpperCase(Locale.ROOT);
            String host = spec.substring(sep + 3, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(spec.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new ConfigException(key, spec, "port is not a number");
            }
            if (port < 0 || port > 65535) {
                throw new ConfigException(key, spec, "port out of range");
            }
            return new Listener(name, host, port);
        }

        @Override
        public String toString() {
            return name + "://" + host + ":" + port;
        }
    }
}
