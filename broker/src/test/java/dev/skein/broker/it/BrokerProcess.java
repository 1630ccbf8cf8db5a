package dev.skein.broker.it;

import dev.skein.broker.testing.FreePorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A Skein broker in its own JVM ({@code dev.skein.broker.Main} on this JVM's classpath), so a test can
 * kill -9 it. Fixed port (picked free once) and data dir, so it restarts where it left off.
 */
final class BrokerProcess implements AutoCloseable {
    private final Path dir;
    private final int port;
    private final Path propertiesFile;
    private Process process;
    private int starts;

    BrokerProcess(Map<String, String> overrides) throws IOException {
        dir = Files.createTempDirectory("skein-proc-");
        port = FreePorts.pick();
        Map<String, String> p = TestBroker.baseProperties(dir, port);
        p.putAll(overrides);
        Properties props = new Properties();
        props.putAll(p);
        propertiesFile = dir.resolve("server.properties");
        try (OutputStream out = Files.newOutputStream(propertiesFile)) {
            props.store(out, "BrokerProcess");
        }
    }

    /** Starts the broker JVM and waits until it answers DescribeCluster. */
    void start() throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        starts++;
        process = new ProcessBuilder(List.of(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "dev.skein.broker.Main", propertiesFile.toString()))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("broker-" + starts + ".log").toFile()))
                .start();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("broker exited with " + process.exitValue() + ": " + log());
            }
            try (Admin admin = admin(Duration.ofSeconds(3))) {
                return admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).size() == 1;
            }
        });
    }

    /** kill -9: no shutdown hook runs, nothing is flushed or checkpointed. */
    void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    Path dataDir() {
        return dir;
    }

    Admin admin(Duration timeout) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        return Admin.create(p);
    }

    String log() throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= starts; i++) {
            Path f = dir.resolve("broker-" + i + ".log");
            if (Files.exists(f)) {
                String s = Files.readString(f);
                sb.append("--- start ").append(i).append('\n').append(s.length() > 4000 ? s.substring(s.length() - 4000) : s);
            }
        }
        return sb.toString();
    }

    @Override
    public void close() throws Exception {
        try {
            kill();
        } finally {
            TestBroker.deleteRecursively(dir);
        }
    }
}
