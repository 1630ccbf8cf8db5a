package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.controller.MetadataState;
import dev.skein.broker.controller.QuorumDescription;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.utils.Time;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The controller of a broker that is not a voter ({@code process.roles=broker}): it takes no part
 * in the Raft quorum, so a cluster can have more brokers than voters. Requests travel to the active
 * controller through a Ratis client, exactly as a voter forwards them; the metadata is followed
 * with {@link ControllerRequest.FetchMetadata} long polls, each answered with the whole applied
 * state once it moved past what this broker holds (the metadata of a cluster is small; deltas can
 * come later). Images are published in order, and a request waits until this broker's metadata
 * includes its outcome, so it reads its own writes as a voter does.
 */
public final class QuorumObserver extends ForwardingController {
    private static final Logger log = LoggerFactory.getLogger(QuorumObserver.class);
    static final int FETCH_WAIT_MS = 500;

    private final RaftControllerSettings settings;
    private final Time time;
    private final RaftGroup group;
    private final CopyOnWriteArrayList<Consumer<ClusterImage>> listeners = new CopyOnWriteArrayList<>();
    private final ExecutorService publisher = Executors.newSingleThreadExecutor(daemon("skein-metadata-publisher"));
    private volatile RaftClient client;
    private RaftProperties clientProperties;
    private Thread follower;
    private volatile boolean closed;
    private long index = -1;
    private ClusterImage image;
    private final ReadBarrier readBarrier;

    public QuorumObserver(RaftControllerSettings settings, Time time) {
        this.settings = settings;
        this.time = time;
        this.readBarrier = new ReadBarrier(() -> client, settings::requestTimeoutMs);
        List<RaftPeer> peers = settings.voters().stream()
                .map(v -> RaftPeer.newBuilder().setId(RaftPeerId.valueOf(Integer.toString(v.id()))).setAddress(v.address()).build())
                .toList();
        this.group = RaftGroup.valueOf(RaftController.groupId(settings.clusterId()), peers);
        this.image = MetadataState.EMPTY.toImage(settings.clusterId(), -1);
    }

    public synchronized void start() {
        RaftProperties cp = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(cp, TimeDuration.valueOf(Math.max(FETCH_WAIT_MS * 3L,
                settings.requestTimeoutMs() / 2), TimeUnit.MILLISECONDS));
        clientProperties = cp;
        client = newClient();
        follower = new Thread(this::follow, "skein-metadata-follower-" + settings.nodeId());
        follower.setDaemon(true);
        follower.start();
        log.info("Node {} follows the controller quorum {} as a broker that is not a voter", settings.nodeId(),
                settings.voters());
    }

    private RaftClient newClient() {
        return RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(group)
                .setProperties(clientProperties)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                        (int) Math.max(1, settings.requestTimeoutMs() / 100), TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                .build();
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    // ---- following the metadata ----

    private void follow() {
        while (!closed) {
            try {
                long since;
                synchronized (this) {
                    since = index;
                }
                ControllerReply reply = send(null, new ControllerRequest.FetchMetadata(since, FETCH_WAIT_MS),
                        FETCH_WAIT_MS + settings.requestTimeoutMs());
                if (reply.topic() != null && reply.index() > since) {
                    MetadataState state = MetadataCodec.decodeState(reply.topic());
                    install(reply.index(), state.toImage(settings.clusterId(), (int) reply.value()));
                } else if (reply.value() != image().controllerId() && reply.index() == since) {
                    ClusterImage current = image();
                    install(since, new ClusterImage(current.clusterId(), (int) reply.value(), current.brokers(),
                            current.topics(), current.brokerConfigs()));
                }
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                log.debug("Node {} could not fetch metadata: {}", settings.nodeId(), e.toString());
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private synchronized void install(long newIndex, ClusterImage next) {
        index = newIndex;
        image = next;
        notifyAll();
        try {
            publisher.execute(() -> {
                for (Consumer<ClusterImage> l : listeners) {
                    try {
                        l.accept(next);
                    } catch (RuntimeException e) {
                        log.warn("A metadata listener failed on the image at index {}: {}", newIndex, e.toString());
                    }
                }
            });
        } catch (RejectedExecutionException ignored) {
            // closed
        }
    }

    /** The metadata log index this broker's image reflects. */
    public synchronized long appliedIndex() {
        return index;
    }

    @Override
    public synchronized ClusterImage image() {
        return image;
    }

    @Override
    public void addListener(Consumer<ClusterImage> listener) {
        listeners.add(listener);
    }

    @Override
    public synchronized void subscribe(Consumer<ClusterImage> listener) {
        listeners.add(listener);
        ClusterImage current = image;
        try {
            publisher.execute(() -> listener.accept(current));
        } catch (RejectedExecutionException ignored) {
            // closed
        }
    }

    @Override
    public synchronized boolean awaitMetadata(long offset, long timeoutMs) throws InterruptedException {
        long deadline = time.milliseconds() + timeoutMs;
        while (index < offset) {
            long leftMs = deadline - time.milliseconds();
            if (leftMs <= 0 || closed) {
                return false;
            }
            wait(leftMs);
        }
        return true;
    }

    @Override
    public boolean catchUp(long timeoutMs) throws InterruptedException {
        if (closed) {
            return false;
        }
        return readBarrier.catchUp(timeoutMs, time, this::awaitMetadata);
    }

    // ---- requests, forwarded to the active controller ----

    /** Sends a request to the active controller and waits (bounded) until this broker's metadata includes its outcome. */
    @Override
    ControllerReply call(ControllerRequest request) {
        // one id for every attempt Ratis makes to deliver it: the controller applies it at most once
        ControllerReply reply = send(Uuid.randomUuid(), request, settings.requestTimeoutMs()).throwIfError();
        try {
            if (!awaitMetadata(reply.index(), settings.requestTimeoutMs())) {
                log.warn("Node {} has not received the metadata up to {} after {} ms", settings.nodeId(), reply.index(),
                        settings.requestTimeoutMs());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return reply;
    }

    /**
     * The quorum as the active controller describes it (voters with their directory ids), asked
     * each time: a broker that is not a voter answers DescribeQuorum as Kafka's brokers do, by
     * asking the controller. Null when no controller answers in time.
     */
    @Override
    public QuorumDescription quorum() {
        try {
            return QuorumCodec.decode(send(null, new ControllerRequest.DescribeQuorum(), settings.requestTimeoutMs())
                    .throwIfError().topic());
        } catch (RuntimeException e) {
            log.debug("Node {} could not ask the active controller for the quorum: {}", settings.nodeId(), e.toString());
            return null;
        }
    }

    private ControllerReply send(Uuid requestId, ControllerRequest request, long timeoutMs) {
        if (closed) {
            throw new NotControllerException("The controller client of node " + settings.nodeId() + " is shut down");
        }
        RaftClient c = client;
        CompletableFuture<RaftClientReply> future = c.async()
                .sendReadOnlyUnordered(Message.valueOf(ByteString.copyFrom(ControllerRequest.encode(requestId, request))));
        RaftClientReply raftReply;
        try {
            raftReply = future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new NotControllerException("No active controller answered within " + timeoutMs + " ms");
        } catch (ExecutionException e) {
            renewClient(c, e.getCause());
            throw new NotControllerException("No active controller reachable: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NotControllerException("Interrupted while waiting for the active controller");
        }
        if (!raftReply.isSuccess()) {
            throw new NotControllerException("The controller quorum refused the request: " + raftReply.getException());
        }
        return ControllerReply.decode(raftReply.getMessage().getContent().toByteArray());
    }

    /** A Ratis client that exhausted its retries closes for good; the broker must outlive a quorum loss. */
    private synchronized void renewClient(RaftClient broken, Throwable failure) {
        if (closed || client != broken) {
            return;
        }
        client = newClient();
        log.info("Node {} replaced its Ratis client after: {}", settings.nodeId(), failure.toString());
        try {
            broken.close();
        } catch (IOException | RuntimeException e) {
            log.debug("Closing the failed Ratis client: {}", e.toString());
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            notifyAll();
        }
        if (follower != null) {
            follower.interrupt();
        }
        publisher.shutdownNow();
        RaftClient c = client;
        if (c != null) {
            try {
                c.close();
            } catch (IOException | RuntimeException e) {
                log.debug("Closing the Ratis client: {}", e.toString());
            }
        }
    }
}
