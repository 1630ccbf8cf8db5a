package dev.skein.broker.api;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import dev.skein.broker.server.Partition;
import dev.skein.broker.server.ReplicaManager;
import dev.skein.broker.storage.EpochEndOffset;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownLeaderEpochException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Optional;

/** ListOffsets, OffsetForLeaderEpoch and DeleteRecords: questions about, and trims of, a partition's offsets. */
final class OffsetsApi {
    private static final Logger log = LoggerFactory.getLogger(OffsetsApi.class);

    private final ReplicaManager replicaManager;

    OffsetsApi(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    private Partition partition(ClusterImage image, String topic, int partition) {
        TopicMetadata t = image.topic(topic);
        if (t == null || partition < 0 || partition >= t.partitionCount()) {
            throw new UnknownTopicOrPartitionException("This server does not host this topic-partition.");
        }
        return replicaManager.partition(new TopicPartition(topic, partition))
                .orElseThrow(() -> new UnknownTopicOrPartitionException("This server does not host this topic-partition."));
    }

    private static void checkEpoch(Partition p, int currentLeaderEpoch) {
        if (!p.isLeader()) {
            throw new NotLeaderOrFollowerException("This broker does not lead " + p.topicPartition());
        }
        if (currentLeaderEpoch < 0) {
            return;
        }
        if (currentLeaderEpoch < p.leaderEpoch()) {
            throw new FencedLeaderEpochException("Leader epoch " + currentLeaderEpoch + " is older than " + p.leaderEpoch());
        }
        if (currentLeaderEpoch > p.leaderEpoch()) {
            throw new UnknownLeaderEpochException("Leader epoch " + currentLeaderEpoch + " is newer than " + p.leaderEpoch());
        }
    }

    ListOffsetsResponseData listOffsets(ListOffsetsRequestData request, short version, ClusterImage image) {
        ListOffsetsResponseData response = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic t : request.topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse tr = new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(t.name());
            for (ListOffsetsRequestData.ListOffsetsPartition lp : t.partitions()) {
                ListOffsetsResponseData.ListOffsetsPartitionResponse pr = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                        .setPartitionIndex(lp.partitionIndex()).setTimestamp(-1).setOffset(-1).setLeaderEpoch(-1);
                try {
                    Partition p = partition(image, t.name(), lp.partitionIndex());
                    checkEpoch(p, lp.currentLeaderEpoch());
                    PartitionLog l = p.log();
                    long ts = lp.timestamp();
                    if (ts == ListOffsetsRequest.EARLIEST_TIMESTAMP || ts == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                        pr.setOffset(l.logStartOffset()).setLeaderEpoch(p.leaderEpoch());
                    } else if (ts == ListOffsetsRequest.LATEST_TIMESTAMP) {
                        pr.setOffset(p.highWatermark()).setLeaderEpoch(p.leaderEpoch());
                    } else if (ts == ListOffsetsRequest.LATEST_TIERED_TIMESTAMP) {
                        pr.setOffset(-1);
                    } else if (ts == ListOffsetsRequest.MAX_TIMESTAMP) {
                        found(pr, l.maxTimestampAndOffset(), p.highWatermark());
                    } else if (ts >= 0) {
                        found(pr, l.offsetForTimestamp(ts), p.highWatermark());
                    } else {
                        pr.setErrorCode(Errors.INVALID_REQUEST.code());
                    }
                } catch (ApiException e) {
                    pr.setErrorCode(Errors.forException(e).code());
                } catch (IOException e) {
                    log.error("ListOffsets on {}-{} failed: {}", t.name(), lp.partitionIndex(), e.toString());
                    pr.setErrorCode(Errors.KAFKA_STORAGE_ERROR.code());
                }
                if (version < 4) {
                    pr.setLeaderEpoch(-1); // the field exists from v4
                }
                tr.partitions().add(pr);
            }
            response.topics().add(tr);
        }
        return response;
    }

    private static void found(ListOffsetsResponseData.ListOffsetsPartitionResponse pr,
                              Optional<FileRecords.TimestampAndOffset> found, long highWatermark) {
        if (found.isPresent() && found.get().offset < highWatermark) {
            FileRecords.TimestampAndOffset f = found.get();
            pr.setTimestamp(f.timestamp).setOffset(f.offset).setLeaderEpoch(f.leaderEpoch.orElse(-1));
        }
    }

    OffsetForLeaderEpochResponseData offsetForLeaderEpoch(OffsetForLeaderEpochRequestData request, ClusterImage image) {
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
        for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t : request.topics()) {
            OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult tr =
                    new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(t.topic());
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition lp : t.partitions()) {
                OffsetForLeaderEpochResponseData.EpochEndOffset r = new OffsetForLeaderEpochResponseData.EpochEndOffset()
                        .setPartition(lp.partition()).setLeaderEpoch(-1).setEndOffset(-1);
                try {
                    Partition p = partition(image, t.topic(), lp.partition());
                    checkEpoch(p, lp.currentLeaderEpoch());
                    EpochEndOffset e = p.log().endOffsetForEpoch(lp.leaderEpoch());
                    r.setLeaderEpoch(e.epoch()).setEndOffset(e.endOffset());
                } catch (ApiException e) {
                    r.setErrorCode(Errors.forException(e).code());
                }
                tr.partitions().add(r);
            }
            response.topics().add(tr);
        }
        return response;
    }

    DeleteRecordsResponseData deleteRecords(DeleteRecordsRequestData request, ClusterImage image) {
        DeleteRecordsResponseData response = new DeleteRecordsResponseData();
        for (DeleteRecordsRequestData.DeleteRecordsTopic t : request.topics()) {
            DeleteRecordsResponseData.DeleteRecordsTopicResult tr = new DeleteRecordsResponseData.DeleteRecordsTopicResult().setName(t.name());
            for (DeleteRecordsRequestData.DeleteRecordsPartition dp : t.partitions()) {
                DeleteRecordsResponseData.DeleteRecordsPartitionResult r = new DeleteRecordsResponseData.DeleteRecordsPartitionResult()
                        .setPartitionIndex(dp.partitionIndex()).setLowWatermark(-1);
                try {
                    checkEpoch(partition(image, t.name(), dp.partitionIndex()), -1);
                    r.setLowWatermark(replicaManager.deleteRecords(new TopicPartition(t.name(), dp.partitionIndex()), dp.offset()));
                } catch (ApiException e) {
                    r.setErrorCode(Errors.forException(e).code());
                } catch (IOException e) {
                    log.error("DeleteRecords on {}-{} failed: {}", t.name(), dp.partitionIndex(), e.toString());
                    r.setErrorCode(Errors.KAFKA_STORAGE_ERROR.code());
                }
                tr.partitions().add(r);
            }
            response.topics().add(tr);
        }
        return response;
    }
}
