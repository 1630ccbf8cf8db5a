package dev.skein.broker.replication;

import dev.skein.broker.network.KernelSockets;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The follower's connection against a plain socket on loopback playing the leader: frames both ways,
 * responses of every size class (kept buffer, grown buffer, one of their own), and each way a round
 * can end badly.
 */
class FetchConnectionTest {
    private final ExecutorService leaderThread = Executors.newSingleThreadExecutor();
    private ServerSocket server;
    private FetchConnection connection;

    @BeforeEach
    void setUp() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void tearDown() throws Exception {
        if (connection != null) {
            connection.close();
        }
        server.close();
        leaderThread.shutdownNow();
        assertThat(leaderThread.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Accepts one connection and answers each request frame with {@code answers[i]}, split into small writes. */
    private CompletableFuture<byte[][]> leader(byte[]... answers) {
        return CompletableFuture.supplyAsync(() -> {
            try (Socket s = server.accept()) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                byte[][] requests = new byte[answers.length][];
                for (int i = 0; i < answers.length; i++) {
                    requests[i] = new byte[in.readInt()];
                    in.readFully(requests[i]);
                    out.writeInt(answers[i].length);
                    for (int off = 0; off < answers[i].length; off += 100_000) {
                        out.write(answers[i], off, Math.min(100_000, answers[i].length - off));
                        out.flush();
                    }
                }
                // wait for the follower to hang up
                while (in.read() >= 0) {
                    // nothing more is expected
                }
                return requests;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, leaderThread);
    }

    /** A leader that accepts one connection and leaves it to the test. */
    private CompletableFuture<Socket> acceptOne() {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return server.accept();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, leaderThread);
    }

    private FetchConnection connect() throws IOException {
        return connect(-1);
    }

    private FetchConnection connect(int receiveBufferBytes) throws IOException {
        connection = FetchConnection.open(server.getInetAddress().getHostAddress(), server.getLocalPort(), 5_000,
                receiveBufferBytes, Time.SYSTEM);
        return connection;
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] remaining(ByteBuffer buf) {
        byte[] b = new byte[buf.remaining()];
        buf.duplicate().get(b);
        return b;
    }

    @Test
    void roundTripsOfEverySizeOverOneConnection() throws Exception {
        byte[] small = bytes(1_000, 1);
        byte[] grown = bytes(300_000, 2);
        byte[] ownBuffer = bytes(3 * FetchConnection.REUSED_BYTES + 17, 3);
        byte[] empty = new byte[0];
        CompletableFuture<byte[][]> requests = leader(small, grown, ownBuffer, empty, small);
        FetchConnection c = connect();
        byte[][] expected = {small, grown, ownBuffer, empty, small};
        for (int i = 0; i < expected.length; i++) {
            ByteBuffer head = ByteBuffer.wrap(("header-" + i).getBytes(StandardCharsets.UTF_8));
            ByteBuffer body = ByteBuffer.wrap(("body-" + i).getBytes(StandardCharsets.UTF_8));
            ByteBuffer response = c.roundTrip(new ByteBuffer[] {head, body}, 10_000, 10L << 20);
            assertThat(remaining(response)).as("response %d", i).isEqualTo(expected[i]);
            assertThat(head.remaining()).as("the caller's buffers are not consumed").isEqualTo(("header-" + i).length());
        }
        connection.close();
        byte[][] sent = requests.get(10, TimeUnit.SECONDS);
        for (int i = 0; i < expected.length; i++) {
            assertThat(new String(sent[i], StandardCharsets.UTF_8)).isEqualTo("header-" + i + "body-" + i);
        }
    }

    @Test
    void aRequestEncodedIntoTheSendBufferIsTheFrameMessageUtilWouldBuild() throws Exception {
        CompletableFuture<byte[][]> requests = leader(bytes(10, 4), bytes(10, 5));
        FetchConnection c = connect();
        ByteBuffer head = ByteBuffer.wrap("header".getBytes(StandardCharsets.UTF_8));
        FetchRequestData small = new FetchRequestData().setReplicaId(2).setMaxWaitMs(500).setSessionId(7).setSessionEpoch(3);
        // larger than the 4 KiB send buffer the connection starts with: it grows for the request
        FetchRequestData large = new FetchRequestData().setReplicaId(2);
        for (int i = 0; i < 300; i++) {
            large.topics().add(new FetchRequestData.FetchTopic().setTopic("topic-" + i)
                    .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(i).setFetchOffset(i * 1000L))));
        }
        short version = 12;
        // one cache for both requests, as a fetcher keeps one: it holds only strings, each for its own bytes
        ObjectSerializationCache cache = new ObjectSerializationCache();
        for (FetchRequestData body : List.of(small, large)) {
            c.roundTrip(head, body, version, cache, 10_000, 1 << 20);
            assertThat(head.remaining()).as("the header buffer is not consumed").isEqualTo(6);
        }
        connection.close();
        byte[][] sent = requests.get(10, TimeUnit.SECONDS);
        for (int i = 0; i < 2; i++) {
            ByteBuffer expected = MessageUtil.toByteBufferAccessor(i == 0 ? small : large, version).buffer();
            assertThat(new String(sent[i], 0, 6, StandardCharsets.UTF_8)).isEqualTo("header");
            assertThat(ByteBuffer.wrap(sent[i], 6, sent[i].length - 6)).as("request %d", i).isEqualTo(expected);
        }
        assertThat(sent[1].length).isGreaterThan(4 * 1024);
    }

    @Test
    void aLeaderThatDoesNotAnswerInTimeEndsTheRound() throws Exception {
        CompletableFuture<Socket> accepted = acceptOne();
        FetchConnection c = connect();
        long start = System.nanoTime();
        assertThatThrownBy(() -> c.roundTrip(new ByteBuffer[] {ByteBuffer.wrap(new byte[10])}, 200, 1 << 20))
                .isInstanceOf(SocketTimeoutException.class);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(190));
        accepted.get(10, TimeUnit.SECONDS).close();
    }

    @Test
    void aResponseLargerThanAllowedIsRefusedByItsSize() throws Exception {
        leader(bytes(5_000, 4));
        FetchConnection c = connect();
        assertThatThrownBy(() -> c.roundTrip(new ByteBuffer[] {ByteBuffer.wrap(new byte[3])}, 10_000, 4_999))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("5000 bytes is out of bounds");
    }

    @Test
    void aLeaderThatHangsUpMidResponseEndsTheRound() throws Exception {
        CompletableFuture.runAsync(() -> {
            try (Socket s = server.accept()) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                in.readFully(new byte[in.readInt()]);
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeInt(1_000);
                out.write(new byte[10]);
                out.flush();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, leaderThread);
        FetchConnection c = connect();
        assertThatThrownBy(() -> c.roundTrip(new ByteBuffer[] {ByteBuffer.wrap(new byte[3])}, 10_000, 1 << 20))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed the connection");
    }

    @Test
    void closingFromAnotherThreadEndsARoundInProgress() throws Exception {
        CompletableFuture<Socket> accepted = acceptOne();
        FetchConnection c = connect();
        Socket leaderSide = accepted.get(10, TimeUnit.SECONDS);
        CompletableFuture<Throwable> round = CompletableFuture.supplyAsync(() -> {
            try {
                c.roundTrip(new ByteBuffer[] {ByteBuffer.wrap(new byte[3])}, 60_000, 1 << 20);
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        // the request reaching the leader means the round is now waiting for its answer
        new DataInputStream(leaderSide.getInputStream()).readFully(new byte[4 + 3]);
        c.close();
        assertThat(round.get(10, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
        assertThat(c.isOpen()).isFalse();
        leaderSide.close();
    }

    /** replica.socket.receive.buffer.bytes is the follower socket's SO_RCVBUF (Linux doubles what it is asked for). */
    @Test
    void theFollowersSocketHasTheConfiguredReceiveBuffer() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "reads the socket's buffers with ss(8)");
        CompletableFuture<Socket> accepted = acceptOne();
        connect(40_000);
        try (Socket leaderSide = accepted.get(10, TimeUnit.SECONDS)) {
            assertThat(KernelSockets.memory(leaderSide.getPort(), server.getLocalPort()))
                    .as("the follower's end of the connection").containsEntry("rb", 80_000L);
        }
    }
}
