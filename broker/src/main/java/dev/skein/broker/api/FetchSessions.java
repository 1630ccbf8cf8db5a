package dev.skein.broker.api;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.utils.Time;

import dev.skein.broker.server.FetchRequestPartition;
import dev.skein.broker.server.FetchResult;

/**
 * The broker's incremental fetch sessions (KIP-227). A client that opens a session sends the whole
 * partition list once; afterwards each request names only the partitions whose fetch position
 * changed (and those to forget), and each response carries only the partitions with something new:
 * records, an error, a diverging epoch, or a high watermark or log start offset the client has not
 * been told yet. A follower fetching ~20 idle partitions per acks=all round trip then sends, reads
 * and parses a few instead of all of them.
 *
 * <p>At most {@code maxSlots} sessions are kept ({@code max.incremental.fetch.session.cache.slots},
 * 0 disables them). When the cache is full, a new session takes the slot of the least recently used
 * one if that one has been idle for {@code evictionMs}, or if the new one is a follower's and the old
 * one a consumer's (replication must not lose its sessions to a crowd of consumers); otherwise the
 * client is answered without a session (id 0) and keeps sending full fetches, which always works.
 *
 * <p>A session is used by one client at a time, but a client that timed out may send its next
 * request while the previous one still waits in the purgatory, so a session's state is only touched
 * under its own lock.
 */
final class FetchSessions {
    /** Where a session's partition is identified: by topic id from Fetch v13, by name before. */
    record Key(Uuid topicId, String topic, int partition) {
        static Key of(boolean byId, Uuid topicId, String topic, int partition) {
            return byId ? new Key(topicId, null, partition) : new Key(Uuid.ZERO_UUID, topic, partition);
        }

        static Key of(boolean byId, TopicIdPartition partition) {
            return of(byId, partition.topicId(), partition.topic(), partition.partition());
        }

        // Written out because a record's own equals and hashCode are built at run time from method handles
        // (ObjectMethods), and the JIT inlines that chain into every map call on a session: the loop that put each
        // partition of a request into its session compiled to ~19 KB of code per broker.
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && partition == k.partition && topicId.equals(k.topicId) && Objects.equals(topic, k.topic);
        }

        @Override
        public int hashCode() {
            return 31 * (31 * topicId.hashCode() + (topic == null ? 0 : topic.hashCode())) + partition;
        }
    }

    /**
     * What the session holds for one partition: the request's fetch parameters and what the client was last
     * told. Entries are linked in the session's fetch order, so moving one to the end allocates nothing.
     */
    static final class Cached {
        final Key key;
        FetchRequestPartition request;
        long highWatermark = -1;
        long logStartOffset = -1;
        private Cached prev;
        private Cached next;
        /** Forgotten (or replaced) since a reader took it from the session: {@link Session#answer} passes it over. */
        private boolean removed;

        Cached(Key key, FetchRequestPartition request) {
            this.key = key;
            this.request = request;
        }
    }

    static final class Session {
        final int id;
        final boolean follower;
        final boolean usesTopicIds;
        /** The epoch the next request must carry. */
        int nextEpoch = 1;
        long lastUsedMs;
        private final Map<Key, Cached> partitions = new HashMap<>();
        /**
         * The fetch order, a ring through this sentinel: partitions that were answered with something move to the
         * end, so none starves (a {@code LinkedHashMap} moved one by removing it and putting a new node back).
         */
        private final Cached order = new Cached(null, null);

        Session(int id, boolean follower, boolean usesTopicIds, long nowMs) {
            this.id = id;
            this.follower = follower;
            this.usesTopicIds = usesTopicIds;
            this.lastUsedMs = nowMs;
            order.prev = order;
            order.next = order;
        }

        int size() {
            return partitions.size();
        }

        Cached get(Key key) {
            return partitions.get(key);
        }

        /** Sets the partition's fetch parameters; a partition new to the session goes last. */
        void put(Key key, FetchRequestPartition request) {
            Cached c = partitions.get(key);
            if (c != null) {
                c.request = request;
                return;
            }
            c = new Cached(key, request);
            partitions.put(key, c);
            link(c);
        }

        /**
         * Takes the partitions of the request that opens this session, in its order; a partition named twice keeps
         * its first place and its last parameters. A loop of its own, not {@link #put}'s: nearly every put in a
         * session's life finds its partition there, so the JIT compiles put without the other branch, and the puts
         * of a session being opened, which find none, made every broker throw that code away.
         */
        void open(List<FetchRequestPartition> requested, boolean byId) {
            for (FetchRequestPartition r : requested) {
                Key key = Key.of(byId, r.partition());
                Cached c = partitions.get(key);
                if (c == null) {
                    c = new Cached(key, r);
                    partitions.put(key, c);
                    link(c);
                } else {
                    c.request = r;
                }
            }
        }

        /** Sets the fetch parameters of an incremental request's partitions, in its order ({@link #put} each). */
        void update(List<FetchRequestPartition> requested, boolean byId) {
            for (FetchRequestPartition r : requested) {
                put(Key.of(byId, r.partition()), r);
            }
        }

        void remove(Key key) {
            Cached c = partitions.remove(key);
            if (c != null) {
                unlink(c);
                c.removed = true;
            }
        }

        /** The partitions in fetch order. */
        Cached[] entries() {
            Cached[] out = new Cached[partitions.size()];
            int i = 0;
            for (Cached c = order.next; c != order; c = c.next) {
                out[i++] = c;
            }
            return out;
        }

        /** The keys in fetch order. */
        List<Key> keys() {
            List<Key> out = new ArrayList<>(partitions.size());
            for (Cached c = order.next; c != order; c = c.next) {
                out.add(c.key);
            }
            return out;
        }

        private void link(Cached c) {
            c.prev = order.prev;
            c.next = order;
            order.prev.next = c;
            order.prev = c;
        }

        private void unlink(Cached c) {
            c.prev.next = c.next;
            c.next.prev = c.prev;
            c.prev = null;
            c.next = null;
        }

        /**
         * Records what a full response tells the client about {@code entries} (their {@code results}, in the same
         * order) and returns the indexes of those it carries: every one still in the session. The order stays.
         */
        List<Integer> answerAll(Cached[] entries, List<FetchResult> results) {
            List<Integer> out = new ArrayList<>(entries.length);
            for (int i = 0; i < entries.length; i++) {
                Cached c = entries[i];
                if (c.removed) {
                    continue; // forgotten by a later request of this session meanwhile
                }
                FetchResult r = results.get(i);
                c.highWatermark = r.highWatermark();
                c.logStartOffset = r.logStartOffset();
                out.add(i);
            }
            return out;
        }

        /**
         * Records what an incremental response tells the client about {@code entries} (their {@code results}, in the
         * same order) and returns the indexes of those with something new, which it carries. They move to the end
         * of the session's order. Kept apart from {@link #answerAll}: see {@code FetchApi.read}.
         */
        List<Integer> answerNews(Cached[] entries, List<FetchResult> results) {
            List<Integer> out = new ArrayList<>();
            for (int i = 0; i < entries.length; i++) {
                Cached c = entries[i];
                if (c.removed) {
                    continue; // forgotten by a later request of this session meanwhile
                }
                FetchResult r = results.get(i);
                boolean changed = r.highWatermark() != c.highWatermark || r.logStartOffset() != c.logStartOffset;
                c.highWatermark = r.highWatermark();
                c.logStartOffset = r.logStartOffset();
                if (changed || r.bytes() > 0 || r.error() != Errors.NONE || r.divergingEpoch() != null) {
                    out.add(i);
                    unlink(c);
                    link(c);
                }
            }
            return out;
        }
    }

    private final int maxSlots;
    private final long evictionMs;
    private final Time time;
    private final Random random;
    private final Map<Integer, Session> sessions = new HashMap<>();

    FetchSessions(int maxSlots, long evictionMs, Time time, Random random) {
        this.maxSlots = maxSlots;
        this.evictionMs = evictionMs;
        this.time = time;
        this.random = random;
    }

    /** Opens a session, or returns null if the cache has no slot for it (the client goes on without one). */
    synchronized Session open(boolean follower, boolean usesTopicIds) {
        if (maxSlots <= 0) {
            return null;
        }
        long now = time.milliseconds();
        if (sessions.size() >= maxSlots && !evictOne(follower, now)) {
            return null;
        }
        int id;
        do {
            id = random.nextInt(Integer.MAX_VALUE);
        } while (id == FetchMetadata.INVALID_SESSION_ID || sessions.containsKey(id));
        Session s = new Session(id, follower, usesTopicIds, now);
        sessions.put(id, s);
        return s;
    }

    /** Frees a slot: the least recently used session if it is stale, else (for a follower) the least recently used consumer's. */
    private boolean evictOne(boolean forFollower, long now) {
        Session lru = leastRecentlyUsed(false);
        if (lru != null && now - lru.lastUsedMs >= evictionMs) {
            sessions.remove(lru.id);
            return true;
        }
        Session consumer = forFollower ? leastRecentlyUsed(true) : null;
        if (consumer != null) {
            sessions.remove(consumer.id);
            return true;
        }
        return false;
    }

    private Session leastRecentlyUsed(boolean consumersOnly) {
        Session lru = null;
        for (Session s : sessions.values()) {
            if ((!consumersOnly || !s.follower) && (lru == null || s.lastUsedMs < lru.lastUsedMs)) {
                lru = s;
            }
        }
        return lru;
    }

    /** The session with this id, marked as used now, or null. */
    synchronized Session get(int id) {
        Session s = sessions.get(id);
        if (s != null) {
            s.lastUsedMs = time.milliseconds();
        }
        return s;
    }

    synchronized void close(int id) {
        sessions.remove(id);
    }

    synchronized int size() {
        return sessions.size();
    }
}
