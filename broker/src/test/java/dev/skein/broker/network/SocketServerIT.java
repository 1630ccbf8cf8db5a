package dev.skein.broker.network;

import dev.skein.broker.api.SupportedApis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.epoll.Epoll;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Kafka listener over a real loopback socket: it runs on the epoll transport where Netty's
 * native library is shipped (Linux x86-64), and on either transport a fetch response whose records
 * stay in a segment file reaches the client intact (epoll sends the file range with
 * {@code sendfile}, NIO with {@code transferTo}) without closing the segment's file, so the same
 * range can be sent again.
 */
class SocketServerIT {
    private static final short FETCH_VERSION = 16;

    @TempDir
    Path dir;
    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private FileRecords segment;
    private SocketServer server;
    private int port;

    @AfterEach
    void tearDown() throws Exception {
        if (server != null) {
            server.close();
        }
        pool.shutdownNow();
        if (segment != null) {
            segment.close();
        }
    }

    @Test
    void listenerRunsOnEpollWhereTheNativeTransportIsShipped() throws Exception {
        assumeTrue(isLinuxX8664(), "the broker ships Netty's epoll library for linux-x86_64 only");
        assertThat(Epoll.isAvailable()).as("epoll unavailable: %s", Epoll.unavailabilityCause()).isTrue();

        start(SocketServer.Transport.available(),
                (context, request) -> CompletableFuture.completedFuture(Response.reply(SupportedApis.response())));

        assertThat(server.transport()).isEqualTo(SocketServer.Transport.EPOLL);
        try (Socket socket = connect()) {
            ByteBuffer frame = roundTrip(socket, RawFrames.frame(new ApiVersionsRequest.Builder().build((short) 3),
                    RawFrames.header(ApiKeys.API_VERSIONS, (short) 3, 7)));
            assertThat(ResponseHeader.parse(frame, ApiKeys.API_VERSIONS.responseHeaderVersion((short) 3)).correlationId())
                    .isEqualTo(7);
            ApiVersionsResponseData versions = new ApiVersionsResponseData(new ByteBufferAccessor(frame), (short) 3);
            assertThat(versions.apiKeys().find(ApiKeys.FETCH.id)).isNotNull();
        }
    }

    @ParameterizedTest
    @EnumSource(SocketServer.Transport.class)
    void fetchResponseWithSegmentRecordsArrivesIntactAndLeavesTheSegmentOpen(SocketServer.Transport transport)
            throws Exception {
        assumeTrue(transport != SocketServer.Transport.EPOLL || Epoll.isAvailable(), "epoll unavailable here");
        segment = FileRecords.open(dir.resolve("00000000000000000000.log").toFile());
        List<String> sent = new ArrayList<>();
        for (int batch = 0; batch < 50; batch++) {
            SimpleRecord[] records = new SimpleRecord[20];
            for (int i = 0; i < records.length; i++) {
                String value = "record-" + batch + "-" + i + "-" + "x".repeat(100);
                sent.add(value);
                records[i] = new SimpleRecord(value.getBytes(StandardCharsets.UTF_8));
            }
            segment.append(MemoryRecords.withRecords(Compression.NONE, records));
        }
        segment.flush();
        Uuid topicId = Uuid.randomUuid();
        start(transport, (context, request) -> {
            FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
                    .setTopicId(topicId);
            for (int p = 0; p < 3; p++) {
                topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p)
                        .setHighWatermark(sent.size()).setRecords(p == 1 ? segment : MemoryRecords.EMPTY));
            }
            return CompletableFuture.completedFuture(Response.reply(new FetchResponseData().setResponses(List.of(topic))));
        });

        try (Socket socket = connect()) {
            for (int correlationId = 1; correlationId <= 3; correlationId++) {
                ByteBuffer frame = roundTrip(socket, RawFrames.frame(
                        FetchRequest.Builder.forConsumer(FETCH_VERSION, 0, 1, Map.of()).build(FETCH_VERSION),
                        RawFrames.header(ApiKeys.FETCH, FETCH_VERSION, correlationId)));

                assertThat(ResponseHeader.parse(frame, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION)).correlationId())
                        .isEqualTo(correlationId);
                FetchResponseData decoded = new FetchResponseData(new ByteBufferAccessor(frame), FETCH_VERSION);
                FetchResponseData.PartitionData second = decoded.responses().get(0).partitions().get(1);
                List<String> values = new ArrayList<>();
                for (Record r : ((MemoryRecords) second.records()).records()) {
                    values.add(new String(Utils.toArray(r.value()), StandardCharsets.UTF_8));
                }
                assertThat(values).as("response %d", correlationId).isEqualTo(sent);
                assertThat(segment.channel().isOpen()).isTrue();
            }
        }
    }

    /**
     * socket.send.buffer.bytes and socket.receive.buffer.bytes reach the accepted connection, on either
     * transport: the kernel's own accounts of that socket (Linux doubles what it is asked for) show them.
     */
    @ParameterizedTest
    @EnumSource(SocketServer.Transport.class)
    void acceptedConnectionsHaveTheConfiguredSocketBuffers(SocketServer.Transport transport) throws Exception {
        assumeTrue(transport != SocketServer.Transport.EPOLL || Epoll.isAvailable(), "epoll unavailable here");
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "reads the socket's buffers with ss(8)");
        start(transport, (context, request) -> CompletableFuture.completedFuture(Response.reply(SupportedApis.response())),
                50_000, 60_000);

        try (Socket socket = connect()) {
            roundTrip(socket, RawFrames.frame(new ApiVersionsRequest.Builder().build((short) 3),
                    RawFrames.header(ApiKeys.API_VERSIONS, (short) 3, 1)));
            Map<String, Long> buffers = KernelSockets.memory(port, socket.getLocalPort());
            assertThat(buffers).as("the listener's end of the connection").containsEntry("tb", 100_000L)
                    .containsEntry("rb", 120_000L);
        }
    }

    private void start(SocketServer.Transport transport, RequestHandler handler) throws InterruptedException {
        start(transport, handler, -1, -1);
    }

    private void start(SocketServer.Transport transport, RequestHandler handler, int sendBuffer, int receiveBuffer)
            throws InterruptedException {
        server = new SocketServer("127.0.0.1", 0, 1 << 20, 1, handler, pool, SupportedApis.response(),
                new RequestMetrics(new SimpleMeterRegistry(), Time.SYSTEM, SupportedApis.apis()), transport)
                .socketBuffers(sendBuffer, receiveBuffer);
        port = server.start();
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        return socket;
    }

    /** Sends one framed request and returns the body of the response frame (after its size). */
    private static ByteBuffer roundTrip(Socket socket, byte[] request) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(request);
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] body = new byte[in.readInt()];
        in.readFully(body);
        return ByteBuffer.wrap(body);
    }

    private static boolean isLinuxX8664() {
        String arch = System.getProperty("os.arch");
        return System.getProperty("os.name").startsWith("Linux") && ("amd64".equals(arch) || "x86_64".equals(arch));
    }
}
