package dev.skein.broker.replication;

import dev.skein.broker.storage.EpochEndOffset;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Replicates the partitions this broker follows from one leader broker: one thread, one
 * {@link FetchConnection}, Kafka's Fetch API with {@code replica_id} (or {@code ReplicaState}) set and
 * {@code LastFetchedEpoch} so the leader can point out divergence. Per partition: fetch from the
 * local log end offset; on {@code DivergingEpoch} truncate and go on; on OFFSET_OUT_OF_RANGE below
 * the leader's log start restart the log there; on other errors back the partition off.
 *
 * <p>Partitions marked {@link FetchTarget#throttled} share the broker's follower {@link Throttle}:
 * while it has no bytes left they are left out of the fetch, otherwise their partition max bytes is
 * capped at what it has left, and the bytes they bring are recorded against it.
 *
 * <p>The partitions to follow are replaced by {@link #assign}; a response for a partition that was
 * reassigned meanwhile is dropped by the epoch check in {@link FollowerLogs}. Construction does not
 * start the thread; {@link #start} does.
 */
public final class ReplicaFetcher implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaFetcher.class);
    static final short MAX_FETCH_VERSION = (short) Math.min(17, ApiKeys.FETCH.latestVersion());

    private final int localId;
    private final int leaderId;
    private final String host;
    private final int port;
    private final FollowerLogs logs;
    private final ReplicationConfig config;
    private final Time time;
    private final short version;
    private final Throttle throttle;
    private final Map<TopicPartition, FetchTarget> partitions = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> backoffUntil = new ConcurrentHashMap<>();
    /**
     * Per followed partition, what the fetcher thread keeps of it between rounds; fetcher thread only.
     * A round reuses these instead of building maps of its partitions: a follower fetches every
     * partition it follows from this leader on every round trip, most of them idle.
     */
    private final Map<TopicPartition, Slot> slots = new HashMap<>();
    /** This round's partitions, in fetch order; fetcher thread only. */
    private final List<Slot> round = new ArrayList<>();
    /** The names of the topics of the partitions fetched, by id (Fetch v13+ answers by id); fetcher thread only. */
    private final Map<Uuid, String> topicNames = new HashMap<>();
    private long rounds;
    private final Object wakeup = new Object();
    private volatile boolean running;
    private volatile Thread thread;
    private volatile FetchConnection connection;
    private int correlationId;
    /** Fetch sessions came with Fetch v7. */
    static final short MIN_SESSION_VERSION = 7;
    private static final Set<Errors> SESSION_ERRORS = Set.of(Errors.FETCH_SESSION_ID_NOT_FOUND,
            Errors.INVALID_FETCH_SESSION_EPOCH, Errors.FETCH_SESSION_TOPIC_ID_ERROR);
    /** This fetcher's side of its fetch session with the leader; fetcher thread only. */
    private final FollowerFetchSession session;
    /** This fetcher's request header, encoded; {@link #send} sets the correlation id of each request in it. */
    private final ByteBuffer header;
    private static final int CORRELATION_ID_AT = 4;
    /**
     * The encoding cache of every request from version 13 on, which names topics by id: the only strings it
     * then caches are the request's rack id and cluster id, the same objects every round (a cache keeps a
     * string's bytes by identity, and strings do not change). Before 13 each request gets a new one: topic
     * names come and go with the partitions followed.
     */
    private final ObjectSerializationCache requestStrings = new ObjectSerializationCache();

    public ReplicaFetcher(int localId, int leaderId, String host, int port, FollowerLogs logs, ReplicationConfig config,
                          Time time, short version) {
        this(localId, leaderId, host, port, logs, config, time, version, new Throttle(time, ReplicationThrottles.BURST_MS));
    }

    /** With the broker's follower re-replication {@code throttle}, applied to targets marked throttled. */
    public ReplicaFetcher(int localId, int leaderId, String host, int port, FollowerLogs logs, ReplicationConfig config,
                          Time time, short version, Throttle throttle) {
        this.throttle = throttle;
        this.localId = localId;
        this.leaderId = leaderId;
        this.host = host;
        this.port = port;
        this.logs = logs;
        this.config = config;
        this.time = time;
        this.version = version;
        RequestHeader h = new RequestHeader(ApiKeys.FETCH, version, "skein-replica-fetcher-" + localId, 0);
        this.header = MessageUtil.toByteBufferAccessor(h.data(), h.headerVersion()).buffer();
        this.session = new FollowerFetchSession(localId, version);
    }

    public int leaderId() {
        return leaderId;
    }

    public String endpoint() {
        return host + ":" + port;
    }

    /** Replaces the partitions fetched from this leader. */
    public void assign(Map<TopicPartition, FetchTarget> targets) {
        partitions.keySet().retainAll(targets.keySet());
        backoffUntil.keySet().retainAll(targets.keySet());
        for (Map.Entry<TopicPartition, FetchTarget> e : targets.entrySet()) {
            FetchTarget old = partitions.put(e.getKey(), e.getValue());
            if (old != null && old.leaderEpoch() != e.getValue().leaderEpoch()) {
                backoffUntil.remove(e.getKey());
            }
        }
        synchronized (wakeup) {
            wakeup.notifyAll();
        }
    }

    public boolean isEmpty() {
        return partitions.isEmpty();
    }

    public synchronized void start() {
        if (thread != null) {
            return;
        }
        running = true;
        Thread t = new Thread(this, "skein-replica-fetcher-" + localId + "-from-" + leaderId);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    public void shutdown() {
        running = false;
        closeConnection();
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void run() {
        while (running) {
            try {
                if (!doWork()) {
                    synchronized (wakeup) {
                        wakeup.wait(50);
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                if (!running) {
                    return;
                }
                log.info("Fetch from broker {} at {}:{} failed: {}; retrying in {} ms", leaderId, host, port,
                        e.toString(), config.fetchBackoffMs());
                closeConnection();
                try {
                    Thread.sleep(config.fetchBackoffMs());
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
        closeConnection();
    }

    /** One fetch round trip; returns false if there was nothing to fetch. */
    boolean doWork() throws IOException {
        long now = time.milliseconds();
        long thisRound = ++rounds;
        round.clear();
        // throttled partitions sit out the round while the follower bucket is empty (or in debt)
        long throttleBytes = throttle.available();
        boolean heldBack = false;
        for (FetchTarget t : partitions.values()) {
            TopicPartition tp = t.partition();
            Long until = backoffUntil.isEmpty() ? null : backoffUntil.get(tp);
            if (until != null && until > now) {
                continue;
            }
            if (t.throttled() && throttleBytes <= 0) {
                heldBack = true;
                continue;
            }
            FollowerLogs.Position position = logs.position(tp);
            if (position == null) {
                continue;
            }
            Slot slot = slots.get(tp);
            if (slot == null) {
                slot = new Slot(tp);
                slots.put(tp, slot);
            }
            slot.target = t;
            slot.position = position;
            slot.round = thisRound;
            round.add(slot);
            topicNames.putIfAbsent(t.topicId(), tp.topic());
        }
        if (round.isEmpty()) {
            return false;
        }
        if (slots.size() > round.size()) {
            // partitions left out of this round (backed off, throttled, no longer followed) are sent
            // afresh when they come back, and the names of topics no longer fetched are dropped
            slots.values().removeIf(slot -> slot.round != thisRound);
            topicNames.clear();
            for (Slot slot : round) {
                topicNames.put(slot.target.topicId(), slot.tp.topic());
            }
        }
        // a held-back partition must not wait out a whole long-poll behind the others: the bucket
        // would fill to its cap meanwhile and the tokens beyond it would be lost
        int maxWaitMs = heldBack ? (int) Math.min(config.fetchWaitMaxMs(), throttle.msUntilAvailable()) : config.fetchWaitMaxMs();
        FetchRequestData request = buildRequest(throttleBytes, maxWaitMs);
        FetchResponseData response;
        try {
            response = send(request);
        } catch (IOException | RuntimeException e) {
            session.handleError();
            throw e;
        }
        if (!session.handleResponse(response)) {
            // the leader lost or refused the session (restart, eviction, epoch): the next fetch is a full one
            Errors error = Errors.forCode(response.errorCode());
            if (error == Errors.NONE || SESSION_ERRORS.contains(error)) {
                log.debug("Fetch session with broker {} ended ({}); the next fetch opens a new one", leaderId, error);
                return true;
            }
        }
        if (response.errorCode() != Errors.NONE.code()) {
            throw new IOException("fetch failed with " + Errors.forCode(response.errorCode()));
        }
        boolean dropped = false;
        for (FetchResponseData.FetchableTopicResponse tr : response.responses()) {
            String topic = version >= 13 ? topicNames.get(tr.topicId()) : tr.topic();
            if (topic == null) {
                dropped = true;
                continue;
            }
            for (FetchResponseData.PartitionData pd : tr.partitions()) {
                Slot slot = slots.get(new TopicPartition(topic, pd.partitionIndex()));
                FetchTarget current = slot == null ? null : partitions.get(slot.tp);
                // the same partition re-assigned with the same leader epoch (a new target object from a
                // metadata update) still takes the answer; FollowerLogs checks the epoch again. A topic
                // re-created under its name has a new id: an answer for the old one is not applied.
                if (slot != null && slot.round == thisRound && current != null
                        && (version < 13 || slot.target.topicId().equals(tr.topicId()))
                        && current.leaderEpoch() == slot.target.leaderEpoch()) {
                    handlePartition(current, slot.position, pd);
                } else {
                    dropped = true;
                }
            }
        }
        if (dropped && version >= MIN_SESSION_VERSION) {
            // The leader's session now counts what it sent as told (a high watermark, say) and would not
            // send it again: a full fetch next makes it answer every partition afresh.
            session.handleError();
        }
        return true;
    }

    private void handlePartition(FetchTarget target, FollowerLogs.Position position, FetchResponseData.PartitionData pd)
            throws IOException {
        TopicPartition tp = target.partition();
        Errors error = Errors.forCode(pd.errorCode());
        switch (error) {
            case NONE -> {
                FetchResponseData.EpochEndOffset diverging = pd.divergingEpoch();
                if (diverging != null && diverging.epoch() >= 0 && diverging.endOffset() >= 0) {
                    long to = Divergence.truncationOffset(new EpochEndOffset(diverging.epoch(), diverging.endOffset()),
                            logs.endOffsetForEpoch(tp, diverging.epoch()), position.logEndOffset());
                    log.info("Truncating {} to {}: diverged from leader {} at epoch {} (leader ends it at {})",
                            tp, to, leaderId, diverging.epoch(), diverging.endOffset());
                    logs.truncate(tp, target.leaderEpoch(), to);
                    return;
                }
                MemoryRecords records = pd.records() instanceof MemoryRecords m ? m : MemoryRecords.EMPTY;
                if (target.throttled()) {
                    throttle.record(records.sizeInBytes());
                }
                logs.append(tp, target.leaderEpoch(), records, pd.highWatermark());
            }
            case OFFSET_OUT_OF_RANGE -> {
                if (position.logEndOffset() < pd.logStartOffset()) {
                    log.info("Restarting the log of {} at the leader's log start offset {}", tp, pd.logStartOffset());
                    logs.truncateFullyAndStartAt(tp, target.leaderEpoch(), pd.logStartOffset());
                } else if (pd.highWatermark() >= 0 && position.logEndOffset() > pd.highWatermark()) {
                    logs.truncate(tp, target.leaderEpoch(), pd.highWatermark());
                } else {
                    backOff(tp);
                }
            }
            default -> {
                log.debug("Fetch of {} from broker {} answered {}; backing off", tp, leaderId, error);
                backOff(tp);
            }
        }
    }

    private void backOff(TopicPartition tp) {
        backoffUntil.put(tp, time.milliseconds() + config.fetchBackoffMs());
    }

    /**
     * The fetch of this round's partitions. From Fetch v7 it goes through the leader's fetch session
     * (KIP-227): only partitions whose fetch position or limits changed are sent, partitions left out
     * of this round (backed off, throttled) are forgotten, and a session the leader lost is opened
     * again with a full fetch ({@link FollowerFetchSession}).
     */
    private FetchRequestData buildRequest(long throttleBytes, int maxWaitMs) {
        session.begin();
        for (Slot slot : round) {
            int maxBytes = slot.target.throttled()
                    ? (int) Math.max(1, Math.min(config.fetchMaxBytes(), throttleBytes))
                    : config.fetchMaxBytes();
            session.add(slot.tp, partitionData(slot, maxBytes));
        }
        return session.build(maxWaitMs, config.fetchMinBytes(), config.fetchResponseMaxBytes());
    }

    /**
     * The fetch of the slot's partition from its position: the one sent last time if nothing in it changed,
     * which is most partitions of most rounds (the session then leaves them out of the request), so
     * a round allocates for the partitions that moved only.
     */
    private FetchRequest.PartitionData partitionData(Slot slot, int maxBytes) {
        FetchTarget t = slot.target;
        FollowerLogs.Position position = slot.position;
        Uuid topicId = version >= 13 ? t.topicId() : Uuid.ZERO_UUID;
        FetchRequest.PartitionData last = slot.lastFetched;
        if (last != null && last.fetchOffset == position.logEndOffset() && last.logStartOffset == position.logStartOffset()
                && last.maxBytes == maxBytes && last.topicId.equals(topicId)
                && last.currentLeaderEpoch.orElse(-1) == t.leaderEpoch()
                && last.lastFetchedEpoch.orElse(-1) == (version >= 12 ? position.latestEpoch() : -1)) {
            return last;
        }
        FetchRequest.PartitionData data = new FetchRequest.PartitionData(topicId, position.logEndOffset(),
                position.logStartOffset(), maxBytes, Optional.of(t.leaderEpoch()),
                version >= 12 ? Optional.of(position.latestEpoch()) : Optional.empty());
        slot.lastFetched = data;
        return data;
    }

    private FetchResponseData send(FetchRequestData body) throws IOException {
        FetchConnection c = connection;
        if (c == null || !c.isOpen()) {
            c = FetchConnection.open(host, port, config.socketTimeoutMs(), config.socketReceiveBufferBytes(), time);
            connection = c;
            if (!running) {
                // shut down while connecting: closeConnection may have run before the field was set
                closeConnection();
                throw new IOException("the fetcher was shut down");
            }
        }
        // the header is encoded once; each request patches its correlation id in (bytes 4-7 of every
        // request header version)
        header.putInt(CORRELATION_ID_AT, ++correlationId);
        long maxResponseBytes = 2L * Math.max(config.fetchResponseMaxBytes(), config.fetchMaxBytes()) + (1 << 20);
        // the buffer is the connection's until the next round: the records parsed from it are appended
        // to the local logs (and nothing keeps them) before the next fetch is sent
        ByteBuffer buf = c.roundTrip(header, body, version, version >= 13 ? requestStrings : new ObjectSerializationCache(),
                (long) config.fetchWaitMaxMs() + config.socketTimeoutMs(), maxResponseBytes);
        ResponseHeader rh = ResponseHeader.parse(buf, ApiKeys.FETCH.responseHeaderVersion(version));
        if (rh.correlationId() != correlationId) {
            throw new IOException("correlation id " + rh.correlationId() + " does not match " + correlationId);
        }
        return (FetchResponseData) AbstractResponse.parseResponse(ApiKeys.FETCH, new ByteBufferAccessor(buf), version).data();
    }

    private void closeConnection() {
        FetchConnection c = connection;
        connection = null;
        if (c != null) {
            c.close();
        }
    }

    /** A followed partition, as the fetcher thread keeps it between rounds. */
    private static final class Slot {
        final TopicPartition tp;
        /** This round's target and local position. */
        FetchTarget target;
        FollowerLogs.Position position;
        /** The round it was last fetched in. */
        long round;
        /** What it was last fetched with. */
        FetchRequest.PartitionData lastFetched;

        Slot(TopicPartition tp) {
            this.tp = tp;
        }
    }

    List<TopicPartition> assigned() {
        return List.copyOf(partitions.keySet());
    }
}
