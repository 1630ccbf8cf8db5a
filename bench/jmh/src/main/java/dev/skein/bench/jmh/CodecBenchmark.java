package dev.skein.bench.jmh;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Request decode and response encode as the network layer does them: a Produce request of six
 * partitions with one 16 KiB batch each parsed from its frame, and its response encoded; a
 * consumer's Fetch request of six partitions (by topic id, as clients send it) parsed from its frame.
 * The Fetch response encode is {@link FetchBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class CodecBenchmark {
    private static final short VERSION = 11;
    private static final short FETCH_VERSION = 17;
    private byte[] frame;
    private byte[] fetchFrame;
    private ProduceResponseData response;
    private final FetchBenchmark.CountingChannel channel = new FetchBenchmark.CountingChannel(false);

    @Setup(Level.Trial)
    public void setUp() {
        ProduceRequestData req = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
        ProduceRequestData.TopicProduceData td = new ProduceRequestData.TopicProduceData().setName("bench");
        ProduceResponseData.TopicProduceResponse tr = new ProduceResponseData.TopicProduceResponse().setName("bench");
        for (int p = 0; p < 6; p++) {
            td.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(p)
                    .setRecords(Batches.batch(16, 1024, Compression.NONE, p)));
            tr.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(p).setBaseOffset(1000L * p));
        }
        req.topicData().add(td);
        response = new ProduceResponseData();
        response.responses().add(tr);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, VERSION, "bench", 1);
        ByteBuffer h = MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
        ByteBuffer b = MessageUtil.toByteBufferAccessor(req, VERSION).buffer();
        frame = new byte[h.remaining() + b.remaining()];
        h.get(frame, 0, h.remaining());
        b.get(frame, frame.length - b.remaining(), b.remaining());

        FetchRequestData fetch = new FetchRequestData().setMaxWaitMs(500).setMinBytes(1).setMaxBytes(52_428_800)
                .setIsolationLevel((byte) 0).setSessionId(0).setSessionEpoch(-1);
        fetch.replicaState().setReplicaId(-1);
        FetchRequestData.FetchTopic ft = new FetchRequestData.FetchTopic().setTopicId(Uuid.randomUuid());
        for (int p = 0; p < 6; p++) {
            ft.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setCurrentLeaderEpoch(0)
                    .setFetchOffset(100_000L * p).setLastFetchedEpoch(-1).setLogStartOffset(-1).setPartitionMaxBytes(1_048_576));
        }
        fetch.topics().add(ft);
        fetchFrame = frame(new RequestHeader(ApiKeys.FETCH, FETCH_VERSION, "bench", 2), fetch, FETCH_VERSION);
    }

    private static byte[] frame(RequestHeader header, org.apache.kafka.common.protocol.ApiMessage body, short version) {
        ByteBuffer h = MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
        ByteBuffer b = MessageUtil.toByteBufferAccessor(body, version).buffer();
        byte[] out = new byte[h.remaining() + b.remaining()];
        h.get(out, 0, h.remaining());
        b.get(out, out.length - b.remaining(), b.remaining());
        return out;
    }

    @Benchmark
    public AbstractRequest decodeProduceRequest() {
        ByteBuffer buf = ByteBuffer.wrap(frame);
        RequestHeader header = RequestHeader.parse(buf);
        return AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(), new ByteBufferAccessor(buf)).request;
    }

    @Benchmark
    public AbstractRequest decodeFetchRequest() {
        ByteBuffer buf = ByteBuffer.wrap(fetchFrame);
        RequestHeader header = RequestHeader.parse(buf);
        return AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(), new ByteBufferAccessor(buf)).request;
    }

    @Benchmark
    public long encodeProduceResponse() throws IOException {
        Send send = SendBuilder.buildResponseSend(new ResponseHeader(1, ApiKeys.PRODUCE.responseHeaderVersion(VERSION)),
                response, VERSION);
        long total = 0;
        while (!send.completed()) {
            total += send.writeTo(channel);
        }
        return total;
    }
}
