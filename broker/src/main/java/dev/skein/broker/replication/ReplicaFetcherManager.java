package dev.skein.broker.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * Keeps one {@link ReplicaFetcher} per leader broker, fed with the partitions this broker follows
 * from it. {@link #update} is called with the full set after every metadata image; fetchers whose
 * leader moved (other endpoint) are replaced, and those left without partitions are stopped.
 */
public final class ReplicaFetcherManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaFetcherManager.class);

    private final int localId;
    private final FollowerLogs logs;
    private final ReplicationConfig config;
    private final Time time;
    private final Throttle throttle;
    private final Map<Integer, ReplicaFetcher> fetchers = new HashMap<>();
    private boolean closed;

    public ReplicaFetcherManager(int localId, FollowerLogs logs, ReplicationConfig config, Time time) {
        this(localId, logs, config, time, new Throttle(time, ReplicationThrottles.BURST_MS));
    }

    /** With the follower re-replication {@code throttle} every fetcher shares. */
    public ReplicaFetcherManager(int localId, FollowerLogs logs, ReplicationConfig config, Time time, Throttle throttle) {
        this.throttle = throttle;
        this.localId = localId;
        this.logs = logs;
        this.config = config;
        this.time = time;
    }

    /** Replaces what is followed: every partition this broker follows, with its leader's endpoint. */
    public synchronized void update(Iterable<FetchTarget> targets) {
        if (closed) {
            return;
        }
        Map<Integer, Map<TopicPartition, FetchTarget>> byLeader = new HashMap<>();
        Map<Integer, String> endpoints = new HashMap<>();
        for (FetchTarget t : targets) {
            byLeader.computeIfAbsent(t.leaderId(), k -> new HashMap<>()).put(t.partition(), t);
            endpoints.put(t.leaderId(), t.host() + ":" + t.port());
        }
        for (var it = fetchers.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!byLeader.containsKey(e.getKey()) || !e.getValue().endpoint().equals(endpoints.get(e.getKey()))) {
                e.getValue().shutdown();
                it.remove();
            }
        }
        for (var e : byLeader.entrySet()) {
            ReplicaFetcher f = fetchers.get(e.getKey());
            if (f == null) {
                FetchTarget any = e.getValue().values().iterator().next();
                f = new ReplicaFetcher(localId, e.getKey(), any.host(), any.port(), logs, config, time,
                        ReplicaFetcher.MAX_FETCH_VERSION, throttle);
                fetchers.put(e.getKey(), f);
                f.assign(e.getValue());
                f.start();
                log.info("Broker {} fetches {} partition(s) from broker {} at {}", localId, e.getValue().size(),
                        e.getKey(), f.endpoint());
            } else {
                f.assign(e.getValue());
            }
        }
    }

    public synchronized int fetcherCount() {
        return fetchers.size();
    }

    @Override
    public synchronized void close() {
        closed = true;
        fetchers.values().forEach(ReplicaFetcher::shutdown);
        fetchers.clear();
    }
}
