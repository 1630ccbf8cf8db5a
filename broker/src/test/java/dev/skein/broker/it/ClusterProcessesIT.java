package dev.skein.broker.it;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The process-cluster fixture itself: a cluster that cannot come up says why, at once, and keeps its logs. */
class ClusterProcessesIT {

    @Test
    void awaitReadyFailsAtOnceWithTheLogsWhenANodeExitsAtStartUp() throws Exception {
        Path dir;
        ClusterProcesses cluster = new ClusterProcesses("skein-cluster-fixture-", 3, Map.of());
        // node 1's Kafka port is taken, so node 1 exits during start-up and the cluster can never have 3 brokers
        try (ServerSocket taken = new ServerSocket(cluster.port(1), 1, InetAddress.getLoopbackAddress())) {
            dir = cluster.dir();
            cluster.startAll();
            long started = System.nanoTime();
            assertThatThrownBy(() -> cluster.awaitReady(0, 3))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("node 1 exited with 1")
                    .hasMessageContaining("could not start")
                    .hasMessageContaining("cluster dir kept: " + dir);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(60));
        } finally {
            cluster.close();
        }
        try {
            assertThat(dir.resolve("node-1").resolve("broker-1.log")).exists();
        } finally {
            TestBroker.deleteRecursively(dir);
        }
        assertThat(Files.exists(dir)).isFalse();
    }
}
