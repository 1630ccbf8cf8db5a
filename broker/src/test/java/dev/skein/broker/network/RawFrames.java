package dev.skein.broker.network;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Hand-built Kafka request frames, well-formed and malformed, for tests that talk raw bytes to the broker. */
public final class RawFrames {
    public static final short PRODUCE_VERSION = 12;
    public static final String CLIENT_ID = "raw-frames";

    private RawFrames() {
    }

    /** The 4-byte length prefix followed by the header and body of {@code request}. */
    public static byte[] frame(AbstractRequest request, RequestHeader header) {
        ByteBuffer body = request.serializeWithHeader(header);
        ByteBuffer out = ByteBuffer.allocate(4 + body.remaining());
        out.putInt(body.remaining()).put(body);
        return out.array();
    }

    public static RequestHeader header(ApiKeys api, short version, int correlationId) {
        return new RequestHeader(api, version, CLIENT_ID, correlationId);
    }

    /** Only a length prefix announcing {@code size} bytes, no body. */
    public static byte[] sizeOnly(int size) {
        return ByteBuffer.allocate(4).putInt(size).array();
    }

    /** An ApiVersions request header with version 99 (header v2: client id, empty tagged fields), empty body. */
    public static byte[] apiVersionsV99(int correlationId) {
        return headerOnlyFrame(ApiKeys.API_VERSIONS.id, (short) 99, correlationId, true);
    }

    /** A request whose API key no Kafka version knows. */
    public static byte[] unknownApiKey(int correlationId) {
        return headerOnlyFrame((short) 999, (short) 0, correlationId, false);
    }

    private static byte[] headerOnlyFrame(short apiKey, short version, int correlationId, boolean flexible) {
        byte[] client = CLIENT_ID.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 2 + 2 + 4 + 2 + client.length + (flexible ? 1 : 0));
        b.putInt(b.capacity() - 4).putShort(apiKey).putShort(version).putInt(correlationId)
                .putShort((short) client.length).put(client);
        if (flexible) {
            b.put((byte) 0);
        }
        return b.array();
    }

    /** A valid Produce frame cut {@code keepBodyBytes} after its header ends, with a length prefix matching the cut. */
    public static byte[] truncatedProduce(int correlationId) {
        byte[] full = frame(produce("t", 0, records("k", "v"), (short) 1),
                header(ApiKeys.PRODUCE, PRODUCE_VERSION, correlationId));
        int headerBytes = 2 + 2 + 4 + 2 + CLIENT_ID.length() + 1;
        int bodyLength = headerBytes + 6;
        byte[] cut = Arrays.copyOf(full, 4 + bodyLength);
        ByteBuffer.wrap(cut).putInt(0, bodyLength);
        return cut;
    }

    public static MemoryRecords records(String key, String value) {
        return MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8)));
    }

    public static ProduceRequest produce(String topic, int partition, MemoryRecords records, short acks) {
        ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(10_000);
        ProduceRequestData.TopicProduceData td = new ProduceRequestData.TopicProduceData().setName(topic);
        td.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(records));
        data.topicData().add(td);
        return ProduceRequest.builder(data).build(PRODUCE_VERSION);
    }
}
