package dev.skein.broker.api;

import dev.skein.broker.network.CachelessMessage;
import dev.skein.broker.server.FetchRequestPartition;
import dev.skein.broker.server.FetchResult;
import dev.skein.broker.storage.EpochEndOffset;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageSizeAccumulator;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.ByteUtils;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A fetch response written straight from the fetch's reads and results, in the bytes Kafka's
 * {@link FetchResponseData} gives for the same response at every Fetch version from 4 (the
 * codec's oldest) on. Building the generated message cost a {@code PartitionData} per partition
 * answered, which makes three default sub-structs when built and six more when sized and written
 * (to compare tagged fields against their defaults): on a follower's round trip over ~19 partitions
 * that was about a tenth of the leader's allocation. Only encodes: it is never read or copied.
 *
 * <p>Partitions are answered in the order of {@code reads} (those at {@code indexes}, ascending, or
 * all), consecutive partitions of one topic under one topic entry, as the generated message would
 * be built. Per partition: the error, high watermark (also the last stable offset: no transactions),
 * log start offset, a diverging epoch if any (tagged, v12+), no aborted transactions (null), no
 * preferred read replica, and the records (empty on an error). A diverging epoch is only written from
 * v12, as a tagged field; a fetch before v12 names no last fetched epoch, so none is found for it.
 */
final class FetchResponseMessage implements CachelessMessage {
    /** The struct of a diverging epoch, as a tagged field: epoch, end offset and no tagged fields of its own. */
    private static final int DIVERGING_EPOCH_SIZE = 4 + 8 + 1;

    private final List<FetchRequestPartition> reads;
    private final List<FetchResult> results;
    private final List<Integer> indexes;
    private final int sessionId;

    /**
     * @param indexes the partitions answered, as ascending indexes into {@code reads}, or null for all
     */
    FetchResponseMessage(List<FetchRequestPartition> reads, List<FetchResult> results, List<Integer> indexes,
                         int sessionId) {
        this.reads = reads;
        this.results = results;
        this.indexes = indexes;
        this.sessionId = sessionId;
    }

    private int answered() {
        return indexes == null ? reads.size() : indexes.size();
    }

    private int index(int k) {
        return indexes == null ? k : indexes.get(k);
    }

    private TopicIdPartition partition(int k) {
        return reads.get(index(k)).partition();
    }

    private static boolean sameTopic(TopicIdPartition a, TopicIdPartition b, boolean byId) {
        return byId ? a.topicId().equals(b.topicId()) : a.topic().equals(b.topic());
    }

    /** The number of answered partitions from {@code k} on that belong to {@code k}'s topic entry. */
    private int run(int k, boolean byId) {
        TopicIdPartition first = partition(k);
        int end = k + 1;
        while (end < answered() && sameTopic(first, partition(end), byId)) {
            end++;
        }
        return end - k;
    }

    private int topicEntries(boolean byId) {
        int n = 0;
        for (int k = 0; k < answered(); k += run(k, byId)) {
            n++;
        }
        return n;
    }

    private static Records records(FetchResult r) {
        return r.error() == Errors.NONE ? r.records() : MemoryRecords.EMPTY;
    }

    private static boolean hasDivergingEpoch(FetchResult r) {
        EpochEndOffset d = r.divergingEpoch();
        return d != null && (d.epoch() != -1 || d.endOffset() != -1);
    }

    private static int arrayLengthSize(int n, boolean flexible) {
        return flexible ? ByteUtils.sizeOfUnsignedVarint(n + 1) : 4;
    }

    @Override
    public short apiKey() {
        return ApiKeys.FETCH.id;
    }

    @Override
    public short lowestSupportedVersion() {
        return ApiKeys.FETCH.oldestVersion();
    }

    @Override
    public short highestSupportedVersion() {
        return ApiKeys.FETCH.latestVersion();
    }

    /** Topic names (before version 13) go through the cache, from sizing to writing; ids need none. */
    @Override
    public boolean usesCache(short version) {
        return version < 13;
    }

    @Override
    public void addSize(MessageSizeAccumulator size, ObjectSerializationCache cache, short version) {
        boolean flexible = version >= 12;
        boolean byId = version >= 13;
        int bytes = 4; // throttle time
        if (version >= 7) {
            bytes += 2 + 4; // error code, session id
        }
        int topics = topicEntries(byId);
        bytes += arrayLengthSize(topics, flexible);
        for (int k = 0; k < answered(); ) {
            int n = run(k, byId);
            TopicIdPartition tip = partition(k);
            if (byId) {
                bytes += 16;
            } else {
                byte[] name = tip.topic().getBytes(StandardCharsets.UTF_8);
                cache.cacheSerializedValue(tip.topic(), name);
                bytes += (flexible ? ByteUtils.sizeOfUnsignedVarint(name.length + 1) : 2) + name.length;
            }
            bytes += arrayLengthSize(n, flexible);
            for (int j = k; j < k + n; j++) {
                FetchResult r = results.get(index(j));
                bytes += 4 + 2 + 8 + 8; // partition, error code, high watermark, last stable offset
                if (version >= 5) {
                    bytes += 8; // log start offset
                }
                bytes += flexible ? 1 : 4; // aborted transactions: null
                if (version >= 11) {
                    bytes += 4; // preferred read replica
                }
                int recordBytes = records(r).sizeInBytes();
                bytes += flexible ? ByteUtils.sizeOfUnsignedVarint(recordBytes + 1) : 4;
                size.addZeroCopyBytes(recordBytes);
                if (flexible) {
                    if (hasDivergingEpoch(r)) {
                        // one tagged field: its count, tag 0, its size, the struct
                        bytes += 1 + 1 + 1 + DIVERGING_EPOCH_SIZE;
                    } else {
                        bytes += 1;
                    }
                }
            }
            if (flexible) {
                bytes += 1; // the topic's tagged fields: none
            }
            k += n;
        }
        if (flexible) {
            bytes += 1; // the response's tagged fields: no node endpoints
        }
        size.addBytes(bytes);
    }

    @Override
    public void write(Writable out, ObjectSerializationCache cache, short version) {
        boolean flexible = version >= 12;
        boolean byId = version >= 13;
        out.writeInt(0); // throttle time
        if (version >= 7) {
            out.writeShort(Errors.NONE.code());
            out.writeInt(sessionId);
        }
        writeArrayLength(out, topicEntries(byId), flexible);
        for (int k = 0; k < answered(); ) {
            int n = run(k, byId);
            TopicIdPartition tip = partition(k);
            if (byId) {
                out.writeUuid(tip.topicId());
            } else {
                byte[] name = cache.getSerializedValue(tip.topic());
                if (flexible) {
                    out.writeUnsignedVarint(name.length + 1);
                } else {
                    out.writeShort((short) name.length);
                }
                out.writeByteArray(name);
            }
            writeArrayLength(out, n, flexible);
            for (int j = k; j < k + n; j++) {
                writePartition(out, partition(j).partition(), results.get(index(j)), version, flexible);
            }
            if (flexible) {
                out.writeUnsignedVarint(0);
            }
            k += n;
        }
        if (flexible) {
            out.writeUnsignedVarint(0);
        }
    }

    private static void writePartition(Writable out, int partition, FetchResult r, short version, boolean flexible) {
        out.writeInt(partition);
        out.writeShort(r.error().code());
        out.writeLong(r.highWatermark());
        out.writeLong(r.highWatermark()); // last stable offset
        if (version >= 5) {
            out.writeLong(r.logStartOffset());
        }
        if (flexible) {
            out.writeUnsignedVarint(0); // aborted transactions: null
        } else {
            out.writeInt(-1);
        }
        if (version >= 11) {
            out.writeInt(-1); // preferred read replica: none
        }
        Records records = records(r);
        if (flexible) {
            out.writeUnsignedVarint(records.sizeInBytes() + 1);
        } else {
            out.writeInt(records.sizeInBytes());
        }
        out.writeRecords(records);
        if (flexible) {
            if (hasDivergingEpoch(r)) {
                out.writeUnsignedVarint(1);
                out.writeUnsignedVarint(0); // tag of the diverging epoch
                out.writeUnsignedVarint(DIVERGING_EPOCH_SIZE);
                out.writeInt(r.divergingEpoch().epoch());
                out.writeLong(r.divergingEpoch().endOffset());
                out.writeUnsignedVarint(0);
            } else {
                out.writeUnsignedVarint(0);
            }
        }
    }

    private static void writeArrayLength(Writable out, int n, boolean flexible) {
        if (flexible) {
            out.writeUnsignedVarint(n + 1);
        } else {
            out.writeInt(n);
        }
    }

    @Override
    public void read(Readable readable, short version) {
        throw new UnsupportedOperationException("a fetch response written by the broker is only encoded");
    }

    @Override
    public List<RawTaggedField> unknownTaggedFields() {
        return List.of();
    }

    @Override
    public Message duplicate() {
        throw new UnsupportedOperationException("a fetch response written by the broker is only encoded");
    }

    @Override
    public String toString() {
        return "FetchResponseMessage(partitions=" + answered() + ", sessionId=" + sessionId + ")";
    }
}
