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
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Fetch for consumers: reads each partition from its fetch offset, bounded by the high watermark,
 * the partition and response byte limits, and waits up to {@code MaxWaitMs} for {@code MinBytes}.
 * A fetch with a replica id (v&lt;15 {@code ReplicaId}, v15+ {@code ReplicaState.ReplicaId}) of 0 or
 * more comes from a follower: it reads up to the log end offset, carries {@code LastFetchedEpoch}
 * for the divergence check, and may be answered with {@code DivergingEpoch}.
 *
 * <p>Incremental fetch sessions (KIP-227) are not offered: every response carries session id 0, so
 * clients send full fetch requests, which Kafka's clients support.
 */
final class FetchApi {
    private final ReplicaManager replicaManager;

    FetchApi(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    CompletableFuture<Response> handle(FetchRequest request, short version, ClusterImage image) {
        FetchRequestData data = request.data();
        if (data.sessionId() != FetchMetadata.INVALID_SESSION_ID) {
            return CompletableFuture.completedFuture(Response.reply(new FetchResponseData()
                    .setErrorCode(Errors.FETCH_SESSION_ID_NOT_FOUND.code())
                    .setSessionId(FetchMetadata.INVALID_SESSION_ID)));
        }
        boolean byId = version >= 13;
        int replicaId = version >= 15 ? data.replicaState().replicaId() : data.replicaId();
        List<FetchRequestPartition> parts = new ArrayList<>();
        Map<FetchRequestPartition, FetchResult> immediate = new LinkedHashMap<>();
        List<FetchRequestPartition> order = new ArrayList<>();
        for (FetchRequestData.FetchTopic ft : data.topics()) {
            TopicMetadata topic = byId ? image.topic(ft.topicId()) : image.topic(ft.topic());
            String name = topic != null ? topic.name() : byId ? null : ft.topic();
            Uuid id = byId ? ft.topicId() : topic != null ? topic.id() : Uuid.ZERO_UUID;
            for (FetchRequestData.FetchPartition fp : ft.partitions()) {
                FetchRequestPartition r = new FetchRequestPartition(new TopicIdPartition(id, fp.partition(), name),
                        fp.fetchOffset(), fp.partitionMaxBytes(),
                        fp.currentLeaderEpoch() < 0 ? Optional.empty() : Optional.of(fp.currentLeaderEpoch()),
                        version >= 12 ? fp.lastFetchedEpoch() : -1);
                order.add(r);
                if (topic == null || fp.partition() < 0 || fp.partition() >= topic.partitionCount()) {
                    immediate.put(r, FetchResult.error(byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION));
                } else {
                    parts.add(r);
                }
            }
        }
        long maxWait = immediate.isEmpty() ? data.maxWaitMs() : 0;
        return replicaManager.fetch(replicaId, parts, maxWait, data.minBytes(), data.maxBytes()).thenApply(results -> {
            Map<FetchRequestPartition, FetchResult> all = new LinkedHashMap<>(immediate);
            all.putAll(results);
            return Response.reply(build(order, all, byId));
        });
    }

    private static FetchResponseData build(List<FetchRequestPartition> order, Map<FetchRequestPartition, FetchResult> results,
                                           boolean byId) {
        FetchResponseData response = new FetchResponseData()
                .setErrorCode(Errors.NONE.code())
                .setSessionId(FetchMetadata.INVALID_SESSION_ID);
        FetchResponseData.FetchableTopicResponse current = null;
        for (FetchRequestPartition r : order) {
            TopicIdPartition tip = r.partition();
            boolean sameTopic = current != null && (byId ? current.topicId().equals(tip.topicId())
                    : current.topic().equals(tip.topic()));
            if (!sameTopic) {
                current = new FetchResponseData.FetchableTopicResponse();
                if (byId) {
                    current.setTopicId(tip.topicId());
                } else {
                    current.setTopic(tip.topic());
                }
                response.responses().add(current);
            }
            FetchResult res = results.get(r);
            FetchResponseData.PartitionData pd = new FetchResponseData.PartitionData();
            if (res.divergingEpoch() != null) {
                pd.setDivergingEpoch(new FetchResponseData.EpochEndOffset()
                        .setEpoch(res.divergingEpoch().epoch()).setEndOffset(res.divergingEpoch().endOffset()));
            }
            current.partitions().add(pd
                    .setPartitionIndex(tip.partition())
                    .setErrorCode(res.error().code())
                    .setHighWatermark(res.highWatermark())
                    .setLastStableOffset(res.highWatermark())
                    .setLogStartOffset(res.logStartOffset())
                    .setAbortedTransactions(null)
                    .setPreferredReadReplica(-1)
                    .setRecords(res.error() == Errors.NONE ? res.records() : MemoryRecords.EMPTY));
        }
        return response;
    }
}
