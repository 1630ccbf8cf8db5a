package dev.skein.broker.it;

import dev.skein.broker.testing.Command;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A log dir on a 4 MiB tmpfs: when it fills, produce fails with KAFKA_STORAGE_ERROR and acked data stays readable. */
class FullDiskIT {
    private static final String TOPIC = "full";

    @Test
    void produceToAFullDiskFailsWithStorageErrorAndEveryAcknowledgedRecordStaysReadable() throws Exception {
        Path mount = Files.createTempDirectory("skein-tmpfs-");
        try {
            boolean mounted = Command.of("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.toString()).run().ok();
            assumeTrue(mounted, "cannot mount a 4 MiB tmpfs at " + mount + " (needs root / CAP_SYS_ADMIN); skipping the full-disk test");
            try {
                fillDiskAndCheck(mount);
            } finally {
                boolean unmounted = Command.of("umount", mount.toString()).run().ok();
                if (!unmounted) {
                    Command.of("umount", "-l", mount.toString()).run().ok();
                }
                assertThat(unmounted).as("umount %s (the broker must release every file it had open there)", mount).isTrue();
            }
        } finally {
            Files.deleteIfExists(mount);
        }
    }

    private void fillDiskAndCheck(Path mount) throws Exception {
        try (TestBroker broker = TestBroker.start(Map.of(
                "log.dirs", mount.resolve("logs").toString(),
                "log.segment.bytes", String.valueOf(256 * 1024),
                "log.index.size.max.bytes", String.valueOf(16 * 1024)))) {
            try (Admin admin = broker.admin()) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            }
            List<String> acked = new ArrayList<>();
            Throwable failure = null;
            String pad = "f".repeat(1000);
            try (KafkaProducer<String, String> producer = broker.producer(Map.of(
                    ProducerConfig.ACKS_CONFIG, "1",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                    ProducerConfig.RETRIES_CONFIG, 0,
                    ProducerConfig.LINGER_MS_CONFIG, 0))) {
                for (int i = 0; i < 20_000 && failure == null; i++) {
                    String value = i + "-" + pad;
                    try {
                        RecordMetadata md = producer.send(new ProducerRecord<>(TOPIC, 0, "k", value)).get(30, TimeUnit.SECONDS);
                        assertThat(md.offset()).isEqualTo(acked.size());
                        acked.add(value);
                    } catch (ExecutionException e) {
                        failure = e.getCause();
                    }
                }
            }
            if (failure == null) {
                fail("20 MB were acknowledged on a 4 MiB tmpfs without an error");
            }
            assertThat(failure).isInstanceOf(KafkaStorageException.class);
            assertThat(acked).isNotEmpty();
            assertThat(broker.readValues(new TopicPartition(TOPIC, 0))).containsExactlyElementsOf(acked);
        }
    }
}
