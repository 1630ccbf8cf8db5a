package dev.skein.broker.it;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Produce over the wire: acks=0 is silent, responses keep request order on a connection. */
class ProduceWireIT {
    private static final short V = 11;
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start(Map.of("auto.create.topics.enable", "true"));
        try (var admin = broker.admin()) {
            admin.createTopics(java.util.List.of(new org.apache.kafka.clients.admin.NewTopic("wire", 1, (short) 1))).all().get();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    private static ProduceRequestData produce(short acks, String topic, String value) {
        ProduceRequestData req = new ProduceRequestData().setAcks(acks).setTimeoutMs(10_000);
        ProduceRequestData.TopicProduceData td = new ProduceRequestData.TopicProduceData().setName(topic);
        td.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes(StandardCharsets.UTF_8)))));
        req.topicData().add(td);
        return req;
    }

    @Test
    void acksZeroProduceGetsNoResponseAndLaterResponsesKeepTheirOrder() throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            wire.write(ApiKeys.PRODUCE, V, produce((short) 0, "wire", "silent-1"));
            wire.write(ApiKeys.PRODUCE, V, produce((short) 0, "wire", "silent-2"));
            int versionsId = wire.write(ApiKeys.API_VERSIONS, (short) 3,
                    new ApiVersionsRequestData().setClientSoftwareName("wire").setClientSoftwareVersion("1"));
            int produceId = wire.write(ApiKeys.PRODUCE, V, produce((short) 1, "wire", "acked"));
            assertThat(produceId).isEqualTo(versionsId + 1);
            // the first answer on the connection is ApiVersions': the acks=0 produces sent nothing back
            ApiVersionsResponseData versions = wire.read(ApiKeys.API_VERSIONS, (short) 3);
            assertThat(versions.errorCode()).isZero();
            ProduceResponseData acked = wire.read(ApiKeys.PRODUCE, V);
            ProduceResponseData.PartitionProduceResponse p = acked.responses().iterator().next().partitionResponses().getFirst();
            assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
            // both silent records were appended, in order, before the acknowledged one
            assertThat(p.baseOffset()).isEqualTo(2);
        }
        assertThat(broker.readValues(new org.apache.kafka.common.TopicPartition("wire", 0)))
                .containsExactly("silent-1", "silent-2", "acked");
    }

    @Test
    void aFailedAcksZeroProduceClosesTheConnection() throws Exception {
        try (KafkaWire wire = new KafkaWire(broker.port())) {
            // an invalid topic name cannot be auto-created: the broker closes the connection instead of answering
            wire.write(ApiKeys.PRODUCE, V, produce((short) 0, "no such topic!", "x"));
            try {
                wire.write(ApiKeys.API_VERSIONS, (short) 3,
                        new ApiVersionsRequestData().setClientSoftwareName("wire").setClientSoftwareVersion("1"));
            } catch (java.net.SocketException closedFirst) {
                // the broker closed the connection before this request was written ("Broken pipe"): the
                // outcome under test, reached sooner; the read below sees the closed connection too
            }
            // no answer to the ApiVersions request: the connection ends instead
            assertThat(wire.readClosed()).isTrue();
        }
    }
}
