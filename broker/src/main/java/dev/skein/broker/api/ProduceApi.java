package dev.skein.broker.api;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.network.Response;
import dev.skein.broker.server.ProduceResult;
import dev.skein.broker.server.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.ProduceRequest;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Produce: resolves each topic (by name, or by id from v13), appends through the replica manager
 * and answers per partition (with acks=all once the high watermark covers the append). With acks=0 nothing is sent back; if such a produce fails the
 * connection is closed, so the client notices (Kafka's behaviour).
 */
final class ProduceApi {
    private final ReplicaManager replicaManager;

    ProduceApi(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    CompletableFuture<Response> handle(ProduceRequest request, short version, ClusterImage image) {
        ProduceRequestData data = request.data();
        boolean byId = version >= 13;
        Map<TopicPartition, MemoryRecords> toAppend = new LinkedHashMap<>();
        // partitions refused before the append; most requests have none, and no map is made for them
        Map<TopicPartition, ProduceResult> rejected = null;
        for (ProduceRequestData.TopicProduceData td : data.topicData()) {
            TopicMetadata topic = byId ? image.topic(td.topicId()) : image.topic(td.name());
            String name = topic != null ? topic.name() : byId ? td.topicId().toString() : td.name();
            for (ProduceRequestData.PartitionProduceData pd : td.partitionData()) {
                TopicPartition tp = new TopicPartition(name, pd.index());
                ProduceResult refusal = null;
                if (topic == null || pd.index() < 0 || pd.index() >= topic.partitionCount()) {
                    refusal = ProduceResult.error(byId && topic == null ? Errors.UNKNOWN_TOPIC_ID
                            : Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
                } else if (topic.isInternal()) {
                    refusal = ProduceResult.error(Errors.INVALID_TOPIC_EXCEPTION, "Cannot append to internal topic " + topic.name());
                } else if (!(pd.records() instanceof MemoryRecords records)) {
                    refusal = ProduceResult.error(Errors.CORRUPT_MESSAGE, "Produce request without records");
                } else {
                    toAppend.put(tp, records);
                }
                if (refusal != null) {
                    if (rejected == null) {
                        rejected = new HashMap<>();
                    }
                    rejected.put(tp, refusal);
                }
            }
        }
        Map<TopicPartition, ProduceResult> refused = rejected;
        return replicaManager.appendAsync(toAppend, data.acks(), data.timeoutMs()).thenApply(appended -> {
            Map<TopicPartition, ProduceResult> results = appended;
            if (refused != null) {
                results = new HashMap<>(refused);
                results.putAll(appended);
            }
            return respond(data, byId, image, results);
        });
    }

    private static Response respond(ProduceRequestData data, boolean byId, ClusterImage image,
                                    Map<TopicPartition, ProduceResult> results) {
        if (data.acks() == 0) {
            for (Map.Entry<TopicPartition, ProduceResult> e : results.entrySet()) {
                if (e.getValue().error() != Errors.NONE) {
                    return new Response.Close("acks=0 produce to " + e.getKey() + " failed with "
                            + e.getValue().error() + (e.getValue().errorMessage() == null ? "" : ": " + e.getValue().errorMessage()));
                }
            }
            return Response.NONE;
        }

        ProduceResponseData response = new ProduceResponseData();
        for (ProduceRequestData.TopicProduceData td : data.topicData()) {
            ProduceResponseData.TopicProduceResponse tr = new ProduceResponseData.TopicProduceResponse();
            if (byId) {
                tr.setTopicId(td.topicId() == null ? Uuid.ZERO_UUID : td.topicId());
            } else {
                tr.setName(td.name());
            }
            TopicMetadata topic = byId ? image.topic(td.topicId()) : image.topic(td.name());
            String name = topic != null ? topic.name() : byId ? td.topicId().toString() : td.name();
            for (ProduceRequestData.PartitionProduceData pd : td.partitionData()) {
                ProduceResult r = results.get(new TopicPartition(name, pd.index()));
                tr.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse()
                        .setIndex(pd.index())
                        .setErrorCode(r.error().code())
                        .setErrorMessage(r.error() == Errors.NONE ? null
                                : r.errorMessage() != null ? r.errorMessage() : r.error().message())
                        .setBaseOffset(r.baseOffset())
                        .setLogAppendTimeMs(r.logAppendTime())
                        .setLogStartOffset(r.logStartOffset()));
            }
            response.responses().add(tr);
        }
        return Response.reply(response);
    }
}
