package dev.skein.broker.api;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.network.Response;
import dev.skein.broker.server.FetchRequestPartition;
import dev.skein.broker.server.FetchResult;
import dev.skein.broker.server.ReplicaManager;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Fetch for consumers: reads each partition from its fetch offset, bounded by the high watermark,
 * the partition and response byte limits, and waits up to {@code MaxWaitMs} for {@code MinBytes}.
 * A fetch with a replica id (v&lt;15 {@code ReplicaId}, v15+ {@code ReplicaState.ReplicaId}) of 0 or
 * more comes from a follower: it reads up to the log end offset, carries {@code LastFetchedEpoch}
 * for the divergence check, and may be answered with {@code DivergingEpoch}.
 *
 * <p>Incremental fetch sessions (KIP-227, Fetch v7+) are offered: a full fetch with session epoch 0
 * opens one (its response carries the session id), later fetches of the session name only the
 * partitions whose position changed and are answered with only the partitions that have something
 * new ({@link FetchSessions}). A fetch with epoch -1 has no session, as before v7.
 */
final class FetchApi {
    /** How long a session must have been idle before a new one may take its slot (Kafka's figure). */
    static final long SESSION_EVICTION_MS = 120_000;

    private final ReplicaManager replicaManager;
    private final FetchSessions sessions;

    FetchApi(ReplicaManager replicaManager, FetchSessions sessions) {
        this.replicaManager = replicaManager;
        this.sessions = sessions;
    }

    /** The number of open fetch sessions. */
    int sessionCount() {
        return sessions.size();
    }

    CompletableFuture<Response> handle(FetchRequest request, short version, ClusterImage image) {
        FetchRequestData data = request.data();
        boolean byId = version >= 13;
        int replicaId = version >= 15 ? data.replicaState().replicaId() : data.replicaId();
        int sessionId = version >= 7 ? data.sessionId() : FetchMetadata.INVALID_SESSION_ID;
        int epoch = version >= 7 ? data.sessionEpoch() : FetchMetadata.FINAL_EPOCH;
        if (epoch == FetchMetadata.INITIAL_EPOCH || epoch == FetchMetadata.FINAL_EPOCH) {
            if (sessionId != FetchMetadata.INVALID_SESSION_ID) {
                sessions.close(sessionId);
            }
            FetchSessions.Session session = epoch == FetchMetadata.INITIAL_EPOCH ? sessions.open(replicaId >= 0, byId) : null;
            List<FetchRequestPartition> requested = requested(data, version, image);
            if (session == null) {
                // a partition named twice is read once, where it was first named, as the last naming asks
                LinkedHashMap<FetchSessions.Key, FetchRequestPartition> once = new LinkedHashMap<>();
                for (FetchRequestPartition r : requested) {
                    once.put(FetchSessions.Key.of(byId, r.partition()), r);
                }
                return read(data, replicaId, byId, image, new ArrayList<>(once.values()), null, null, true);
            }
            FetchSessions.Cached[] entries;
            synchronized (session) {
                session.open(requested, byId);
                entries = session.entries();
            }
            return read(data, replicaId, byId, image, requests(entries), session, entries, true);
        }
        FetchSessions.Session session = sessions.get(sessionId);
        if (session == null) {
            return sessionError(Errors.FETCH_SESSION_ID_NOT_FOUND);
        }
        FetchSessions.Cached[] entries;
        synchronized (session) {
            if (session.nextEpoch != epoch) {
                return sessionError(Errors.INVALID_FETCH_SESSION_EPOCH);
            }
            if (session.usesTopicIds != byId) {
                return sessionError(Errors.FETCH_SESSION_TOPIC_ID_ERROR);
            }
            for (FetchRequestData.ForgottenTopic ft : data.forgottenTopicsData()) {
                for (int partition : ft.partitions()) {
                    session.remove(FetchSessions.Key.of(byId, ft.topicId(), ft.topic(), partition));
                }
            }
            session.update(requested(data, version, image), byId);
            session.nextEpoch = FetchMetadata.nextEpoch(epoch);
            entries = session.entries();
        }
        return read(data, replicaId, byId, image, requests(entries), session, entries, false);
    }

    /**
     * The partitions a request names, in its order, with their fetch parameters (a partition named twice is there
     * twice). Every request passes through here; what is done with them differs by kind of request and is done in
     * a loop of its own (see {@link FetchSessions.Session#open}).
     */
    private static List<FetchRequestPartition> requested(FetchRequestData data, short version, ClusterImage image) {
        boolean byId = version >= 13;
        List<FetchRequestPartition> out = new ArrayList<>();
        for (FetchRequestData.FetchTopic ft : data.topics()) {
            TopicMetadata topic = byId ? image.topic(ft.topicId()) : image.topic(ft.topic());
            String name = topic != null ? topic.name() : byId ? null : ft.topic();
            Uuid id = byId ? ft.topicId() : topic != null ? topic.id() : Uuid.ZERO_UUID;
            for (FetchRequestData.FetchPartition fp : ft.partitions()) {
                out.add(new FetchRequestPartition(new TopicIdPartition(id, fp.partition(), name), fp.fetchOffset(),
                        fp.partitionMaxBytes(),
                        fp.currentLeaderEpoch() < 0 ? Optional.empty() : Optional.of(fp.currentLeaderEpoch()),
                        version >= 12 ? fp.lastFetchedEpoch() : -1));
            }
        }
        return out;
    }

    /** The fetch parameters of {@code entries}, in order; a list the read may change. */
    private static List<FetchRequestPartition> requests(FetchSessions.Cached[] entries) {
        List<FetchRequestPartition> out = new ArrayList<>(entries.length);
        for (FetchSessions.Cached c : entries) {
            out.add(c.request);
        }
        return out;
    }

    /**
     * Reads {@code reads} (in order; {@code entries} their session entries, if in a session) and answers: every partition
     * for a full fetch, for an incremental one those with something new.
     */
    private CompletableFuture<Response> read(FetchRequestData data, int replicaId, boolean byId, ClusterImage image,
                                             List<FetchRequestPartition> reads, FetchSessions.Session session,
                                             FetchSessions.Cached[] entries, boolean full) {
        // Partitions the image does not know are answered at once, without a read; usually there are
        // none and every partition is read, in the request's order.
        FetchResult[] refused = null;
        for (int i = 0; i < reads.size(); i++) {
            // checked against the image of this request: a session's partition may have gone, or its
            // topic been created or re-created, since the session took it
            FetchRequestPartition r = reads.get(i);
            TopicMetadata topic = byId ? image.topic(r.partition().topicId()) : image.topic(r.partition().topic());
            int partition = r.partition().partition();
            if (topic == null || partition < 0 || partition >= topic.partitionCount()) {
                if (refused == null) {
                    refused = new FetchResult[reads.size()];
                }
                refused[i] = FetchResult.error(byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION);
                continue;
            }
            if (!topic.name().equals(r.partition().topic()) || !topic.id().equals(r.partition().topicId())) {
                reads.set(i, new FetchRequestPartition(new TopicIdPartition(topic.id(), partition, topic.name()), r.fetchOffset(),
                        r.maxBytes(), r.currentLeaderEpoch(), r.lastFetchedEpoch()));
            }
        }
        List<FetchRequestPartition> parts = reads;
        if (refused != null) {
            parts = new ArrayList<>(reads.size());
            for (int i = 0; i < reads.size(); i++) {
                if (refused[i] == null) {
                    parts.add(reads.get(i));
                }
            }
        }
        FetchResult[] answeredAtOnce = refused;
        long maxWait = refused == null ? data.maxWaitMs() : 0;
        CompletableFuture<List<FetchResult>> fetched = replicaManager.fetch(replicaId, parts, maxWait, data.minBytes(), data.maxBytes());
        if (session == null) {
            return fetched.thenApply(results -> Response.reply(new FetchResponseMessage(reads,
                    inOrder(results, answeredAtOnce), null, FetchMetadata.INVALID_SESSION_ID)));
        }
        // One completion per kind of answer, none testing which: a session's first answer is full and every later one
        // incremental. Followers' sessions stay open, so the JIT compiles the incremental answer with the full case cut
        // out, and a consumer's first (full) answer through the same code threw it away in every broker.
        if (full) {
            return fetched.thenApply(results -> {
                List<FetchResult> inOrder = inOrder(results, answeredAtOnce);
                List<Integer> answered;
                synchronized (session) {
                    answered = session.answerAll(entries, inOrder);
                }
                return Response.reply(new FetchResponseMessage(reads, inOrder, answered, session.id));
            });
        }
        return fetched.thenApply(results -> {
            List<FetchResult> inOrder = inOrder(results, answeredAtOnce);
            List<Integer> answered;
            synchronized (session) {
                answered = session.answerNews(entries, inOrder);
            }
            return Response.reply(new FetchResponseMessage(reads, inOrder, answered, session.id));
        });
    }

    /** The read's {@code results} with the partitions answered at once (if any) put back in the request's order. */
    private static List<FetchResult> inOrder(List<FetchResult> results, FetchResult[] answeredAtOnce) {
        if (answeredAtOnce == null) {
            return results;
        }
        FetchResult[] all = new FetchResult[answeredAtOnce.length];
        for (int i = 0, next = 0; i < all.length; i++) {
            all[i] = answeredAtOnce[i] != null ? answeredAtOnce[i] : results.get(next++);
        }
        return Arrays.asList(all);
    }

    private static CompletableFuture<Response> sessionError(Errors error) {
        return CompletableFuture.completedFuture(Response.reply(new FetchResponseData()
                .setErrorCode(error.code())
                .setSessionId(FetchMetadata.INVALID_SESSION_ID)));
    }
}
