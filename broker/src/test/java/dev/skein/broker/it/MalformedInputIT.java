package dev.skein.broker.it;

import dev.skein.broker.network.RawFrames;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Malformed frames and invalid requests over real sockets: the broker answers or closes as Apache Kafka
 * does, and after every bad request the data already stored is intact and new clients are served.
 */
class MalformedInputIT {
    private static final String DATA = "intact";
    private static final int MESSAGE_MAX_BYTES = 64 * 1024;
    private static final int SOCKET_REQUEST_MAX_BYTES = 1024 * 1024;
    private static TestBroker broker;
    private static final List<String> stored = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start(Map.of(
                "message.max.bytes", String.valueOf(MESSAGE_MAX_BYTES),
                "socket.request.max.bytes", String.valueOf(SOCKET_REQUEST_MAX_BYTES)));
        try (Admin admin = broker.admin()) {
            admin.createTopics(List.of(new NewTopic(DATA, 1, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(DATA, 0, "k" + i, "v" + i)).get();
                stored.add("v" + i);
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    /** After each bad request: what was stored is read back unchanged, and a new producer is served. */
    @AfterEach
    void storedDataIsIntactAndNewClientsAreServed() throws Exception {
        assertThat(readAll()).containsExactlyElementsOf(stored);
        try (KafkaProducer<String, String> producer = broker.producer(Map.of())) {
            String value = "v" + stored.size();
            long offset = producer.send(new ProducerRecord<>(DATA, 0, "k", value)).get().offset();
            assertThat(offset).isEqualTo(stored.size());
            stored.add(value);
        }
        assertThat(readAll()).containsExactlyElementsOf(stored);
    }

    static Stream<Arguments> framesThatCloseTheConnection() {
        return Stream.of(
                Arguments.of("larger than socket.request.max.bytes", RawFrames.sizeOnly(SOCKET_REQUEST_MAX_BYTES + 1)),
                Arguments.of("negative size", RawFrames.sizeOnly(-5)),
                Arguments.of("produce with truncated body", RawFrames.truncatedProduce(3)),
                Arguments.of("unknown api key", RawFrames.unknownApiKey(4)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("framesThatCloseTheConnection")
    void malformedFrameMakesTheServerCloseTheConnection(String what, byte[] frame) throws Exception {
        try (Socket socket = connect()) {
            socket.getOutputStream().write(frame);
            socket.getOutputStream().flush();
            assertThat(socket.getInputStream().read()).as("server closes after: " + what).isEqualTo(-1);
        }
    }

    @Test
    void apiVersionsWithUnsupportedVersionIsAnsweredWithV0UnsupportedVersionAndTheApiList() throws Exception {
        try (Socket socket = connect()) {
            socket.getOutputStream().write(RawFrames.apiVersionsV99(77));
            ByteBuffer response = readFrame(socket.getInputStream());
            assertThat(response.getInt()).isEqualTo(77);
            ApiVersionsResponseData data = new ApiVersionsResponseData(new ByteBufferAccessor(response), (short) 0);
            assertThat(Errors.forCode(data.errorCode())).isEqualTo(Errors.UNSUPPORTED_VERSION);
            assertThat(data.apiKeys().find(ApiKeys.PRODUCE.id)).isNotNull();
            assertThat(data.apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion())
                    .isEqualTo(ApiKeys.API_VERSIONS.latestVersion());
        }
    }

    @Test
    void produceWithCorruptedCrcIsRejectedWithCorruptMessage() throws Exception {
        MemoryRecords records = RawFrames.records("key", "a value whose bytes get flipped");
        ByteBuffer buf = records.buffer();
        int last = buf.limit() - 1;
        buf.put(last, (byte) (buf.get(last) ^ 0xFF));
        ProduceResponseData.PartitionProduceResponse r = produceRaw(DATA, records);
        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.CORRUPT_MESSAGE);
    }

    @Test
    void produceOfBatchLargerThanMessageMaxBytesIsRejectedWithMessageTooLarge() throws Exception {
        byte[] big = new byte[MESSAGE_MAX_BYTES + 1024];
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(null, big));
        ProduceResponseData.PartitionProduceResponse r = produceRaw(DATA, records);
        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.MESSAGE_TOO_LARGE);
    }

    @Test
    void produceToUnknownTopicIsRejectedWithUnknownTopicOrPartition() throws Exception {
        ProduceResponseData.PartitionProduceResponse r = produceRaw("no-such-topic", RawFrames.records("k", "v"));
        assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }

    @Test
    void createTopicWithInvalidNameFailsWithInvalidTopicException() {
        try (Admin admin = broker.admin()) {
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("bad name!", 1, (short) 1))).all().get())
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidTopicException.class);
        }
    }

    @Test
    void createTopicWithInvalidConfigFailsWithInvalidConfigNamingTheKey() throws Exception {
        try (Admin admin = broker.admin()) {
            NewTopic topic = new NewTopic("bad-config", 1, (short) 1).configs(Map.of("retention.ms", "not-a-number"));
            assertThatThrownBy(() -> admin.createTopics(List.of(topic)).all().get())
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("retention.ms");
            assertThat(admin.listTopics().names().get()).doesNotContain("bad-config");
        }
    }

    private static Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", broker.port());
        socket.setSoTimeout(15_000);
        return socket;
    }

    private static ByteBuffer readFrame(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        int size = data.readInt();
        byte[] body = new byte[size];
        data.readFully(body);
        return ByteBuffer.wrap(body);
    }

    private static ProduceResponseData.PartitionProduceResponse produceRaw(String topic, MemoryRecords records)
            throws IOException {
        ProduceRequest request = RawFrames.produce(topic, 0, records, (short) 1);
        RequestHeader header = RawFrames.header(ApiKeys.PRODUCE, RawFrames.PRODUCE_VERSION, 11);
        try (Socket socket = connect()) {
            socket.getOutputStream().write(RawFrames.frame(request, header));
            AbstractResponse response = AbstractResponse.parseResponse(readFrame(socket.getInputStream()), header);
            ProduceResponseData data = ((ProduceResponse) response).data();
            assertThat(data.responses()).hasSize(1);
            return data.responses().iterator().next().partitionResponses().getFirst();
        }
    }

    private static List<String> readAll() {
        List<String> values = new ArrayList<>();
        TopicPartition tp = new TopicPartition(DATA, 0);
        try (KafkaConsumer<String, String> consumer = broker.consumer(null, Map.of("check.crcs", true))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            assertThat(end).isEqualTo(stored.size());
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(r.offset()).isEqualTo(values.size());
                    values.add(r.value());
                }
                return consumer.position(tp) >= end;
            });
        }
        assertThat(values).isNotEmpty();
        return values;
    }
}
