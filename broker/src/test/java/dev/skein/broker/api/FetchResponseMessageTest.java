package dev.skein.broker.api;

import dev.skein.broker.network.CachelessMessage;
import dev.skein.broker.server.FetchRequestPartition;
import dev.skein.broker.server.FetchResult;
import dev.skein.broker.storage.EpochEndOffset;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageSizeAccumulator;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fetch response the broker writes itself is, byte for byte and in its sizes, the one Kafka's
 * generated {@link FetchResponseData} gives for the same reads and results, at every Fetch version.
 */
class FetchResponseMessageTest {
    private static final Errors[] ERRORS = {Errors.NONE, Errors.NONE, Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER,
            Errors.OFFSET_OUT_OF_RANGE, Errors.UNKNOWN_TOPIC_ID, Errors.FENCED_LEADER_EPOCH};

    @Test
    void encodesAsTheGeneratedMessageAtEveryVersion() {
        Random random = new Random(20261205L);
        for (int trial = 0; trial < 200; trial++) {
            List<FetchRequestPartition> reads = new ArrayList<>();
            List<FetchResult> results = new ArrayList<>();
            int topics = 1 + random.nextInt(4);
            List<TopicIdPartition> pool = new ArrayList<>();
            for (int t = 0; t < topics; t++) {
                Uuid id = new Uuid(random.nextLong(), random.nextLong());
                String name = "topic-" + t + "-" + "x".repeat(random.nextInt(40));
                for (int p = 0; p < 1 + random.nextInt(6); p++) {
                    pool.add(new TopicIdPartition(id, p, name));
                }
            }
            int n = random.nextInt(25);
            for (int i = 0; i < n; i++) {
                // mostly runs of one topic, sometimes a topic again after another (a new topic entry)
                TopicIdPartition tip = pool.get(random.nextInt(4) == 0 || i == 0 ? random.nextInt(pool.size())
                        : Math.min(pool.size() - 1, pool.indexOf(reads.get(i - 1).partition()) + random.nextInt(2)));
                reads.add(new FetchRequestPartition(tip, random.nextInt(1000), 1 << 20, Optional.empty()));
                results.add(result(random));
            }
            List<Integer> indexes = null;
            if (random.nextBoolean()) {
                indexes = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    if (random.nextBoolean()) {
                        indexes.add(i);
                    }
                }
            }
            int sessionId = random.nextInt(3) == 0 ? 0 : random.nextInt(Integer.MAX_VALUE);
            for (short v = ApiKeys.FETCH.oldestVersion(); v <= ApiKeys.FETCH.latestVersion(); v++) {
                // sessions are from v7 and diverging epochs from v12 (a fetch before v12 names no last
                // fetched epoch): the generated message refuses them before, the broker never has them
                int session = v >= 7 ? sessionId : 0;
                List<FetchResult> answered = v >= 12 ? results : withoutDivergingEpochs(results);
                FetchResponseData generated = generated(reads, answered, indexes, v >= 13).setSessionId(session);
                FetchResponseMessage ours = new FetchResponseMessage(reads, results, indexes, session);
                assertThat(encode(ours, v)).as("trial %d, version %d", trial, v).isEqualTo(encode(generated, v));
                assertThat(sizes(ours, v)).as("trial %d, version %d", trial, v).isEqualTo(sizes(generated, v));
            }
        }
    }

    private static List<FetchResult> withoutDivergingEpochs(List<FetchResult> results) {
        List<FetchResult> out = new ArrayList<>();
        for (FetchResult r : results) {
            out.add(new FetchResult(r.error(), r.highWatermark(), r.logStartOffset(), r.records()));
        }
        return out;
    }

    private static FetchResult result(Random random) {
        Errors error = ERRORS[random.nextInt(ERRORS.length)];
        MemoryRecords records = MemoryRecords.EMPTY;
        if (error == Errors.NONE && random.nextBoolean()) {
            SimpleRecord[] batch = new SimpleRecord[1 + random.nextInt(3)];
            for (int i = 0; i < batch.length; i++) {
                byte[] value = new byte[random.nextInt(300)];
                random.nextBytes(value);
                batch[i] = new SimpleRecord(value);
            }
            records = MemoryRecords.withRecords(Compression.NONE, batch);
        }
        EpochEndOffset diverging = null;
        if (random.nextInt(5) == 0) {
            diverging = random.nextInt(4) == 0 ? EpochEndOffset.UNDEFINED
                    : new EpochEndOffset(random.nextInt(50), random.nextInt(100_000));
        }
        return new FetchResult(error, random.nextInt(1_000_000), random.nextInt(1000), records, diverging);
    }

    /** Encodes with a cache only where the message says it uses one, as ResponseWriter does: null otherwise. */
    private static byte[] encode(ApiMessage message, short version) {
        ObjectSerializationCache cache = cacheFor(message, version);
        ByteBuffer buf = ByteBuffer.allocate(message.size(cache, version));
        message.write(new ByteBufferAccessor(buf), cache, version);
        assertThat(buf.hasRemaining()).as("wrote its size exactly").isFalse();
        return buf.array();
    }

    private static List<Integer> sizes(ApiMessage message, short version) {
        MessageSizeAccumulator size = new MessageSizeAccumulator();
        message.addSize(size, cacheFor(message, version), version);
        return List.of(size.totalSize(), size.sizeExcludingZeroCopy());
    }

    private static ObjectSerializationCache cacheFor(ApiMessage message, short version) {
        return message instanceof CachelessMessage m && !m.usesCache(version) ? null : new ObjectSerializationCache();
    }

    /** The response as FetchApi built it with the generated message before it wrote its own. */
    private static FetchResponseData generated(List<FetchRequestPartition> reads, List<FetchResult> results,
                                               List<Integer> indexes, boolean byId) {
        FetchResponseData response = new FetchResponseData().setErrorCode(Errors.NONE.code());
        FetchResponseData.FetchableTopicResponse current = null;
        int n = indexes == null ? reads.size() : indexes.size();
        for (int k = 0; k < n; k++) {
            int i = indexes == null ? k : indexes.get(k);
            TopicIdPartition tip = reads.get(i).partition();
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
            FetchResult res = results.get(i);
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
