package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.AppliedRequests;
import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.controller.MetadataCommand;
import dev.skein.broker.controller.MetadataEntry;
import dev.skein.broker.controller.MetadataState;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.util.ProtoUtils;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The replicated state machine of the controller quorum. Every node applies every committed log
 * entry (a batch of {@link MetadataCommand}s) to its {@link MetadataState}, in log order, and
 * publishes the resulting {@link ClusterImage} to its listeners; a batch rejected by its
 * preconditions changes nothing, on every node alike. An entry answering a request whose entry was
 * applied already (a retried request decided twice) changes nothing either and answers with the
 * first entry's outcome ({@link AppliedRequests}). Snapshots hold the whole state and the outcomes
 * of the last requests (in {@link MetadataCodec}'s form) and are loaded on start and after a
 * snapshot was installed from the leader. Read-only messages are requests to the active controller, handed to the
 * {@code requestHandler}.
 */
final class MetadataStateMachine extends BaseStateMachine {
    private static final Logger log = LoggerFactory.getLogger(MetadataStateMachine.class);

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final String clusterId;
    private final Time time;
    private final CopyOnWriteArrayList<Consumer<ClusterImage>> listeners = new CopyOnWriteArrayList<>();
    /** Delivers images to listeners in order, off Ratis's apply thread, so a listener may call the controller. */
    private final ExecutorService publisher = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "skein-metadata-publisher");
        t.setDaemon(true);
        return t;
    });
    private final Function<byte[], CompletableFuture<byte[]>> requestHandler;
    private final Consumer<RaftPeerId> leaderChanged;
    private final Consumer<List<RaftPeer>> votersChanged;
    private MetadataState state = MetadataState.EMPTY;
    private AppliedRequests requests = new AppliedRequests();
    private long appliedIndex = -1;
    private int leaderId = -1;
    private volatile ClusterImage image;

    MetadataStateMachine(String clusterId, Time time, Function<byte[], CompletableFuture<byte[]>> requestHandler,
                         Consumer<RaftPeerId> leaderChanged, Consumer<List<RaftPeer>> votersChanged) {
        this.clusterId = clusterId;
        this.time = time;
        this.requestHandler = requestHandler;
        this.leaderChanged = leaderChanged;
        this.votersChanged = votersChanged;
        this.image = state.toImage(clusterId, leaderId);
    }

    ClusterImage image() {
        return image;
    }

    synchronized MetadataState state() {
        return state;
    }

    synchronized long appliedIndex() {
        return appliedIndex;
    }

    /** The outcome of the log entry that answered {@code requestId}, or null if none was applied (or it was forgotten). */
    synchronized AppliedRequests.Outcome outcome(Uuid requestId) {
        return requests.outcome(requestId);
    }

    /** The applied state, its index and the leader this node knows, read together. */
    record View(long index, MetadataState state, int leaderId) {
    }

    synchronized View view() {
        return new View(appliedIndex, state, leaderId);
    }

    void addListener(Consumer<ClusterImage> listener) {
        listeners.add(listener);
    }

    /**
     * Adds {@code listener} and queues the current image for it on the publisher, under the lock
     * that {@link #publish} holds: the listener sees the current image, then every later one, in order.
     */
    synchronized void subscribe(Consumer<ClusterImage> listener) {
        listeners.add(listener);
        ClusterImage current = image;
        try {
            publisher.execute(() -> listener.accept(current));
        } catch (RejectedExecutionException ignored) {
            // closed
        }
    }

    /** Waits (bounded) until this node has applied the log up to {@code index}; returns whether it has. */
    synchronized boolean awaitApplied(long index, long timeoutMs) throws InterruptedException {
        long deadline = time.milliseconds() + timeoutMs;
        while (appliedIndex < index) {
            long leftMs = deadline - time.milliseconds();
            if (leftMs <= 0) {
                return false;
            }
            wait(leftMs);
        }
        return true;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        loadLatestSnapshot();
        if (getLifeCycleState() == LifeCycle.State.NEW) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    /** Ratis pauses the state machine before it installs a snapshot from the leader, and reinitializes it after. */
    @Override
    public synchronized void pause() {
        if (getLifeCycleState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    @Override
    public void reinitialize() throws IOException {
        loadLatestSnapshot();
        synchronized (this) {
            if (getLifeCycleState() == LifeCycle.State.PAUSED) {
                getLifeCycle().transition(LifeCycle.State.STARTING);
                getLifeCycle().transition(LifeCycle.State.RUNNING);
            }
        }
    }

    private void loadLatestSnapshot() throws IOException {
        SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
        if (snapshot == null) {
            return;
        }
        byte[] bytes = Files.readAllBytes(snapshot.getFile().getPath());
        if (snapshot.getFile().getFileDigest() != null) {
            MD5FileUtil.verifySavedMD5(snapshot.getFile().getPath().toFile(), snapshot.getFile().getFileDigest());
        }
        MetadataCodec.Snapshot snap = MetadataCodec.decodeSnapshot(bytes, AppliedRequests.DEFAULT_CAPACITY);
        MetadataState loaded = snap.state();
        synchronized (this) {
            state = loaded;
            requests = snap.requests();
            appliedIndex = snapshot.getIndex();
            updateLastAppliedTermIndex(snapshot.getTermIndex());
            publish();
            notifyAll();
        }
        log.info("Loaded metadata snapshot at {}: {} broker(s), {} topic(s)", snapshot.getTermIndex(),
                loaded.brokers().size(), loaded.topics().size());
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public long takeSnapshot() throws IOException {
        MetadataState snapshotState;
        AppliedRequests snapshotRequests;
        TermIndex last;
        synchronized (this) {
            snapshotState = state;
            snapshotRequests = requests.copy();
            last = getLastAppliedTermIndex();
        }
        if (last == null || last.getIndex() < 0) {
            return -1;
        }
        File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        File tmp = new File(file.getParentFile(), file.getName() + ".tmp");
        Files.write(tmp.toPath(), MetadataCodec.encodeSnapshot(snapshotState, snapshotRequests));
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        var md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
        log.debug("Took metadata snapshot at {}", last);
        return last.getIndex();
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        TermIndex termIndex = TermIndex.valueOf(entry);
        byte[] data = entry.getStateMachineLogEntry().getLogData().toByteArray();
        ControllerReply reply;
        synchronized (this) {
            try {
                MetadataEntry decoded = MetadataCodec.decodeEntry(data);
                AppliedRequests.Result applied = requests.apply(state, decoded, termIndex.getIndex());
                state = applied.state();
                if (applied.duplicate()) {
                    log.info("Metadata log entry {} answers request {} again: not applied, its outcome is that of entry {}",
                            termIndex, decoded.requestId(), applied.outcome().index());
                }
                reply = ControllerReply.of(applied.outcome());
            } catch (RuntimeException e) {
                // an entry this node cannot decode: every node of the same version rejects it alike
                log.error("Could not apply metadata log entry {}: {}", termIndex, e.toString());
                reply = ControllerReply.error(e, termIndex.getIndex());
            }
            appliedIndex = termIndex.getIndex();
            updateLastAppliedTermIndex(termIndex);
            publish();
            notifyAll();
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(reply.encode())));
    }

    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        // configuration and no-op entries advance the applied index too
        synchronized (this) {
            super.notifyTermIndexUpdated(term, index);
            appliedIndex = Math.max(appliedIndex, index);
            notifyAll();
        }
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        return requestHandler.apply(request.getContent().toByteArray())
                .thenApply(bytes -> Message.valueOf(ByteString.copyFrom(bytes)));
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        int id = newLeaderId == null ? -1 : VoterKey.of(newLeaderId).nodeId();
        synchronized (this) {
            leaderId = id;
            publish();
        }
        leaderChanged.accept(newLeaderId);
    }

    @Override
    public void notifyConfigurationChanged(long term, long index, RaftConfigurationProto newConfiguration) {
        votersChanged.accept(ProtoUtils.toRaftPeers(newConfiguration.getPeersList()));
    }

    /**
     * Publishes the image of the current state; called with the lock held, so images are queued in
     * log order, and delivered in that order by the publisher thread.
     */
    private void publish() {
        ClusterImage next = state.toImage(clusterId, leaderId);
        image = next;
        long index = appliedIndex;
        try {
            publisher.execute(() -> {
                for (Consumer<ClusterImage> l : listeners) {
                    try {
                        l.accept(next);
                    } catch (RuntimeException e) {
                        log.warn("A metadata listener failed on the image at index {}: {}", index, e.toString());
                    }
                }
            });
        } catch (RejectedExecutionException ignored) {
            // closed
        }
    }

    @Override
    public void close() throws IOException {
        publisher.shutdownNow();
        super.close();
    }
}
