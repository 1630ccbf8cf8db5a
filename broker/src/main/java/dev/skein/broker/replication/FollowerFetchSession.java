package dev.skein.broker.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A follower's side of its fetch session with one leader (KIP-227), and the Fetch requests it sends.
 * Each round the fetcher {@link #begin}s a request, {@link #add}s every partition it fetches with
 * its fetch data, and {@link #build}s the request; the leader's answer goes to {@link #handleResponse},
 * a failed round to {@link #handleError}.
 *
 * <p>The first request, and the first after the session was lost, is a full one: every partition,
 * session epoch 0 (with the old session id, if any, so the leader closes that session). Later ones
 * are incremental: only partitions that are new to the session or whose fetch data changed are sent,
 * those no longer fetched are forgotten, and a partition whose topic id changed (its topic was
 * re-created) is forgotten under the old id and sent under the new one. Before Fetch v7 there are no
 * sessions and every request is full.
 *
 * <p>What Kafka's {@code FetchSessionHandler} and {@code FetchRequest.Builder} do for its replica
 * fetcher, without their per-round maps and lists: the session's partitions are one map kept between
 * rounds, so a round whose partitions are mostly idle allocates for those that moved only. Not
 * thread-safe: the fetcher thread's.
 */
final class FollowerFetchSession {
    /** A partition of the session: the fetch data the leader's session holds for it. */
    private static final class Member {
        final TopicPartition tp;
        FetchRequest.PartitionData data;
        /** The round it was last added in. */
        long round;

        Member(TopicPartition tp) {
            this.tp = tp;
        }
    }

    private final int replicaId;
    private final short version;
    private final boolean sessions;
    private final Map<TopicPartition, Member> members = new LinkedHashMap<>();
    /** This round's partitions to send, and the (topic id, partition) pairs to forget, in order. */
    private final List<Member> toSend = new ArrayList<>();
    private final List<TopicPartition> toForget = new ArrayList<>();
    private final List<Uuid> toForgetIds = new ArrayList<>();
    private int sessionId = FetchMetadata.INVALID_SESSION_ID;
    private int epoch = FetchMetadata.INITIAL_EPOCH;
    private long round;
    /** Whether the request of this round is a full one. */
    private boolean full = true;

    FollowerFetchSession(int replicaId, short version) {
        this.replicaId = replicaId;
        this.version = version;
        this.sessions = version >= ReplicaFetcher.MIN_SESSION_VERSION;
    }

    /** Starts the request of a new round. */
    void begin() {
        round++;
        full = !sessions || epoch == FetchMetadata.INITIAL_EPOCH;
        toSend.clear();
        toForget.clear();
        toForgetIds.clear();
        if (full) {
            members.clear();
        }
    }

    /** Fetches {@code tp} with {@code data} in this round (each partition at most once a round). */
    void add(TopicPartition tp, FetchRequest.PartitionData data) {
        Member m = members.get(tp);
        boolean send;
        if (m == null) {
            m = new Member(tp);
            members.put(tp, m);
            send = true;
        } else {
            send = full || (m.data != data && !m.data.equals(data));
            Uuid was = m.data.topicId;
            if (!full && version >= 13 && !was.equals(data.topicId) && !was.equals(Uuid.ZERO_UUID)
                    && !data.topicId.equals(Uuid.ZERO_UUID)) {
                forget(tp, was); // the topic was re-created: the session's partition under the old id goes
            }
        }
        m.data = data;
        m.round = round;
        if (send) {
            toSend.add(m);
        }
    }

    private void forget(TopicPartition tp, Uuid topicId) {
        toForget.add(tp);
        toForgetIds.add(topicId);
    }

    /** How many partitions the session holds (after {@link #build}: this round's). */
    int size() {
        return members.size();
    }

    /** The request of this round; partitions of the session not added this round are forgotten. */
    FetchRequestData build(int maxWaitMs, int minBytes, int maxBytes) {
        if (!full) {
            for (Iterator<Member> it = members.values().iterator(); it.hasNext(); ) {
                Member m = it.next();
                if (m.round != round) {
                    forget(m.tp, m.data.topicId);
                    it.remove();
                }
            }
        }
        FetchRequestData request = new FetchRequestData()
                .setMaxWaitMs(maxWaitMs)
                .setMinBytes(minBytes)
                .setMaxBytes(maxBytes)
                .setIsolationLevel((byte) 0);
        if (version >= 15) {
            request.setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(replicaId).setReplicaEpoch(-1));
        } else {
            request.setReplicaId(replicaId);
        }
        if (sessions) {
            request.setSessionId(sessionId).setSessionEpoch(epoch);
        }
        boolean byId = version >= 13;
        FetchRequestData.FetchTopic topic = null;
        for (Member m : toSend) {
            FetchRequest.PartitionData d = m.data;
            if (topic == null || (byId ? !topic.topicId().equals(d.topicId) : !topic.topic().equals(m.tp.topic()))) {
                topic = byId ? new FetchRequestData.FetchTopic().setTopicId(d.topicId)
                        : new FetchRequestData.FetchTopic().setTopic(m.tp.topic());
                request.topics().add(topic);
            }
            // fields a version does not carry keep their defaults (the encoder refuses others)
            topic.partitions().add(new FetchRequestData.FetchPartition()
                    .setPartition(m.tp.partition())
                    .setCurrentLeaderEpoch(version >= 9 ? d.currentLeaderEpoch.orElse(-1) : -1)
                    .setFetchOffset(d.fetchOffset)
                    .setLastFetchedEpoch(version >= 12 ? d.lastFetchedEpoch.orElse(-1) : -1)
                    .setLogStartOffset(version >= 5 ? d.logStartOffset : -1)
                    .setPartitionMaxBytes(d.maxBytes));
        }
        FetchRequestData.ForgottenTopic forgotten = null;
        for (int i = 0; i < toForget.size(); i++) {
            TopicPartition tp = toForget.get(i);
            Uuid id = toForgetIds.get(i);
            if (forgotten == null || (byId ? !forgotten.topicId().equals(id) : !forgotten.topic().equals(tp.topic()))) {
                forgotten = byId ? new FetchRequestData.ForgottenTopic().setTopicId(id)
                        : new FetchRequestData.ForgottenTopic().setTopic(tp.topic());
                request.forgottenTopicsData().add(forgotten);
            }
            forgotten.partitions().add(tp.partition());
        }
        return request;
    }

    /**
     * The leader's answer to the request built last. Returns false if the answer must not be applied
     * (the leader refused the session, or a full answer left partitions of the request out); the next
     * request is then a full one. Partitions the answer carries that the fetcher did not ask for are
     * the fetcher's to drop (then {@link #handleError}).
     */
    boolean handleResponse(FetchResponseData response) {
        if (!sessions) {
            return true;
        }
        if (response.errorCode() != Errors.NONE.code()) {
            if (response.errorCode() == Errors.FETCH_SESSION_ID_NOT_FOUND.code()) {
                sessionId = FetchMetadata.INVALID_SESSION_ID;
            }
            epoch = FetchMetadata.INITIAL_EPOCH;
            return false;
        }
        if (full) {
            int answered = 0;
            for (FetchResponseData.FetchableTopicResponse t : response.responses()) {
                answered += t.partitions().size();
            }
            if (answered != members.size()) {
                epoch = FetchMetadata.INITIAL_EPOCH;
                return false;
            }
            sessionId = response.sessionId();
            epoch = sessionId == FetchMetadata.INVALID_SESSION_ID ? FetchMetadata.INITIAL_EPOCH : FetchMetadata.nextEpoch(FetchMetadata.INITIAL_EPOCH);
        } else if (response.sessionId() == FetchMetadata.INVALID_SESSION_ID) {
            // the leader closed the session: this answer stands, the next request opens a new one
            sessionId = FetchMetadata.INVALID_SESSION_ID;
            epoch = FetchMetadata.INITIAL_EPOCH;
        } else {
            epoch = FetchMetadata.nextEpoch(epoch);
        }
        return true;
    }

    /**
     * The round failed, or its answer could not be applied as a whole: the next request is a full one
     * under the same session id, which makes the leader close that session and open a new one.
     */
    void handleError() {
        epoch = FetchMetadata.INITIAL_EPOCH;
    }

    int sessionId() {
        return sessionId;
    }
}
