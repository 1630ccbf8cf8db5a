package dev.skein.broker.it;

import dev.skein.broker.testing.Command;
import dev.skein.broker.testing.Command.Result;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Apache Kafka's own command-line tools (the classes behind kafka-topics.sh, kafka-console-producer.sh,
 * kafka-consumer-groups.sh, ...), each run as its own JVM against the broker, unmodified.
 */
class KafkaCliToolsIT {
    private static TestBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start();
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    /** Runs {@code mainClass} in its own JVM on the test class path; its stdout and stderr are one output. */
    private static Result run(String stdin, String mainClass, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        Result r = Command.of(cmd).mergeStderr().stdin(stdin).timeout(Duration.ofSeconds(90)).run();
        assertThat(r.timedOut()).as("%s finished", mainClass).isFalse();
        return r;
    }

    private static Result topics(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrap()));
        all.addAll(List.of(args));
        return run(null, "org.apache.kafka.tools.TopicCommand", all.toArray(String[]::new));
    }

    @Test
    void kafkaTopicsCreatesDescribesAltersListsAndDeletes() throws Exception {
        Result create = topics("--create", "--topic", "cli-topic", "--partitions", "3", "--replication-factor", "1",
                "--config", "retention.ms=3600000");
        assertThat(create.exit()).as(create.output()).isZero();
        assertThat(create.output()).contains("Created topic cli-topic.");

        Result describe = topics("--describe", "--topic", "cli-topic");
        assertThat(describe.exit()).as(describe.output()).isZero();
        assertThat(describe.output()).contains("PartitionCount: 3", "ReplicationFactor: 1", "retention.ms=3600000",
                "Partition: 2\tLeader: 1\tReplicas: 1\tIsr: 1");

        Result alter = topics("--alter", "--topic", "cli-topic", "--partitions", "5");
        assertThat(alter.exit()).as(alter.output()).isZero();
        assertThat(topics("--describe", "--topic", "cli-topic").output()).contains("PartitionCount: 5");

        Result duplicate = topics("--create", "--topic", "cli-topic", "--partitions", "1");
        assertThat(duplicate.exit()).isNotZero();
        assertThat(duplicate.output()).contains("already exists");

        assertThat(topics("--list").output()).contains("cli-topic");
        Result delete = topics("--delete", "--topic", "cli-topic");
        assertThat(delete.exit()).as(delete.output()).isZero();
        assertThat(topics("--list").output()).doesNotContain("cli-topic");
    }

    @Test
    void consoleProducerConsumerAndConsumerGroupsWorkTogether() throws Exception {
        assertThat(topics("--create", "--topic", "cli-console", "--partitions", "1").exit()).isZero();
        Result produce = run("k1:one\nk2:two\nk3:three\n", "org.apache.kafka.tools.ConsoleProducer",
                "--bootstrap-server", broker.bootstrap(), "--topic", "cli-console",
                "--property", "parse.key=true", "--property", "key.separator=:");
        assertThat(produce.exit()).as(produce.output()).isZero();

        Result consume = run(null, "org.apache.kafka.tools.consumer.ConsoleConsumer",
                "--bootstrap-server", broker.bootstrap(), "--topic", "cli-console", "--from-beginning",
                "--group", "cli-group", "--max-messages", "3", "--timeout-ms", "30000",
                "--property", "print.key=true", "--property", "key.separator=:");
        assertThat(consume.exit()).as(consume.output()).isZero();
        assertThat(consume.output()).contains("k1:one", "k2:two", "k3:three");

        Result groups = run(null, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", broker.bootstrap(), "--describe", "--group", "cli-group");
        assertThat(groups.exit()).as(groups.output()).isZero();
        assertThat(groups.output()).containsPattern("cli-group\\s+cli-console\\s+0\\s+3\\s+3\\s+0");

        Result reset = run(null, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", broker.bootstrap(), "--reset-offsets", "--group", "cli-group",
                "--topic", "cli-console", "--to-earliest", "--execute");
        assertThat(reset.exit()).as(reset.output()).isZero();
        assertThat(reset.output()).containsPattern("cli-group\\s+cli-console\\s+0\\s+0");

        Result offsets = run(null, "org.apache.kafka.tools.GetOffsetShell",
                "--bootstrap-server", broker.bootstrap(), "--topic", "cli-console");
        assertThat(offsets.output()).contains("cli-console:0:3");
    }

    @Test
    void deleteRecordsCommandMovesTheLogStart() throws Exception {
        assertThat(topics("--create", "--topic", "cli-trim", "--partitions", "1").exit()).isZero();
        assertThat(run("a\nb\nc\nd\n", "org.apache.kafka.tools.ConsoleProducer",
                "--bootstrap-server", broker.bootstrap(), "--topic", "cli-trim").exit()).isZero();
        Path json = Files.createTempFile("offsets", ".json");
        try {
            Files.writeString(json, "{\"partitions\":[{\"topic\":\"cli-trim\",\"partition\":0,\"offset\":2}],\"version\":1}");
            Result del = run(null, "org.apache.kafka.tools.DeleteRecordsCommand",
                    "--bootstrap-server", broker.bootstrap(), "--offset-json-file", json.toString());
            assertThat(del.exit()).as(del.output()).isZero();
            assertThat(del.output()).contains("low_watermark: 2");
            assertThat(run(null, "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", broker.bootstrap(),
                    "--topic", "cli-trim", "--time", "-2").output()).contains("cli-trim:0:2");
        } finally {
            Files.deleteIfExists(json);
        }
    }

}
