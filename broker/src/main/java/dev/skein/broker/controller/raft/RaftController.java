package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.ActiveController;
import dev.skein.broker.controller.AppliedRequests;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.MetadataCommand;
import dev.skein.broker.controller.MetadataState;
import dev.skein.broker.controller.QuorumDescription;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.utils.Time;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The controller of a multi-node cluster: a voter of the controller quorum on Apache Ratis. The
 * Ratis leader is the active controller. A request made on any node travels to the leader as a
 * read-only Ratis message; there one thread (the event loop of {@link ActiveControllerLoop}, which
 * owns the {@link ActiveController} decisions) validates it, turns it into {@link MetadataCommand}s,
 * proposes them to the log and waits until they are applied, then answers; the asking node waits
 * until it has applied the same index, so it reads its own writes. Rejected requests propose
 * nothing. Every delivery of one request carries the same request id, so a retry is answered with
 * the outcome of the entry that took effect, never decided twice. A node that cannot reach the
 * quorum within {@code requestTimeoutMs} answers NOT_CONTROLLER (retriable).
 *
 * <p>This class is the voter's lifecycle: the Ratis server and its membership, the two Ratis
 * clients (requests, proposals) and how they follow the leader, and the {@link
 * dev.skein.broker.controller.Controller} contract on this node.
 *
 * <p>On the leader, timers fence brokers whose session expired (moving their leaderships),
 * complete partition reassignments whose new replicas are in sync and, with
 * {@code auto.leader.rebalance.enable}, move leadership back to preferred replicas. Producer
 * ids are handed out from blocks reserved through the log, so they never repeat across failover.
 * Construction starts nothing; {@link #start} does.
 *
 * <p>The voter is known to Ratis by its {@link VoterKey} (node id + directory id of its metadata
 * log dir). With its Raft state intact it rejoins as itself; with a fresh metadata log dir it is a
 * new incarnation under a new key, and a membership loop ({@link QuorumJoin}) bootstraps the quorum
 * or asks it to replace the old peer of this node id by the new one, one configuration change at a
 * time. {@link PeerIdGuard} keeps the new incarnation from answering for the old peer meanwhile.
 */
public final class RaftController extends ForwardingController {
    private static final Logger log = LoggerFactory.getLogger(RaftController.class);

    private static final long PROBE_TIMEOUT_MS = 1000;
    private static final long MEMBERSHIP_RETRY_MS = 500;
    /** How long a node waits before it sends again a request the active controller answered NOT_CONTROLLER. */
    private static final long NOT_CONTROLLER_BACKOFF_MS = 100;

    /**
     * The most bytes of log entries a leader sends a follower in one append (Ratis's default, said
     * here because two sizes below depend on it). A single entry must fit: Ratis cannot replicate a
     * larger one, and one that got into the log would stop the quorum at it.
     */
    static final SizeInBytes APPEND_BYTES = SizeInBytes.valueOf("4MB");
    /**
     * The largest metadata change one log entry may carry, encoded: {@link #APPEND_BYTES} less room
     * for the Ratis envelope of the entry (term, index, client and call ids, lengths).
     */
    static final int MAX_ENTRY_BYTES = APPEND_BYTES.getSizeInt() - 64 * 1024;
    /**
     * The direct buffer the Ratis log gathers entries in before a write: the least Ratis accepts
     * for {@link #APPEND_BYTES} (an entry with its length and checksum), not its default of 8 MB.
     */
    static final SizeInBytes LOG_WRITE_BUFFER = SizeInBytes.valueOf(APPEND_BYTES.getSize() + 8);
    /** Ratis's shaded Netty reads this when its allocator class loads, as Netty reads {@code io.netty.allocator.type}. */
    static final String QUORUM_ALLOCATOR_PROPERTY = "org.apache.ratis.thirdparty.io.netty.allocator.type";

    static {
        // The quorum's gRPC messages are heartbeats and KB-sized entries, a few a second: pooling
        // them kept 8.4 MB of direct memory a broker in gRPC's chunks (measured; bench/README.md,
        // "Where three brokers' memory goes"). Unpooled buffers are freed as each message is done.
        // An operator's own -D setting wins.
        if (System.getProperty(QUORUM_ALLOCATOR_PROPERTY) == null) {
            System.setProperty(QUORUM_ALLOCATOR_PROPERTY, "unpooled");
        }
    }

    private final RaftControllerSettings settings;
    private final Time time;
    private final MetadataStateMachine stateMachine;
    /** What runs while this node is the active controller: the decisions, on their event loop. */
    private final ActiveControllerLoop leaderLoop;
    /** The group with a placeholder peer per {@code controller.quorum.voters} address, for clients. */
    private final RaftGroup group;
    private final VoterStorage storage;
    private volatile RaftServer server;
    /** This voter's identity: node id + directory id of its metadata log dir. */
    private volatile VoterKey self;
    private volatile boolean member;
    private volatile List<RaftPeer> knownVoters = List.of();
    private RaftProperties serverProperties;
    private ScheduledExecutorService membership;
    private QuorumProbe probe;
    private String lastMembershipNote;
    private RaftProperties clientProperties;
    private volatile RaftClient client;
    private volatile RaftClient proposer;
    /** Completed (and replaced) whenever this node learns of a new active controller. */
    private volatile CompletableFuture<Integer> nextLeaderChange = new CompletableFuture<>();
    /** The active controller (node id) as this node last learnt it from the quorum, or -1. */
    private volatile int knownLeader = -1;
    /** Guards replacing the clients (not the controller's monitor: Ratis threads call in while close() holds it). */
    private final Object clientLock = new Object();
    /** Clients replaced on a leader change, closed a little later (they may still carry requests). */
    private final List<RaftClient> retired = new java.util.concurrent.CopyOnWriteArrayList<>();
    private ScheduledExecutorService timers;
    private volatile boolean closed;
    private final ReadBarrier readBarrier;

    public RaftController(RaftControllerSettings settings, Time time, Random random) {
        this.settings = settings;
        this.time = time;
        this.readBarrier = new ReadBarrier(() -> client, settings::requestTimeoutMs);
        settings.self();
        this.stateMachine = new MetadataStateMachine(settings.clusterId(), time, this::onRequestAtLeader,
                this::onLeaderChanged, this::onConfigurationChanged);
        this.leaderLoop = new ActiveControllerLoop(settings, time,
                new ActiveController(time, random, settings.sessionTimeoutMs(), settings.topicDefaults()), stateMachine,
                new ActiveControllerLoop.Proposals() {
                    @Override
                    public RaftClient current() {
                        return proposer;
                    }

                    @Override
                    public void failed(Throwable cause, RaftClient client) {
                        renewClientAfter(cause, true, client);
                    }
                }, this::quorum, this::isActive, () -> closed);
        // clients find the leader by address; the peer ids of the voters are learnt from the quorum
        this.group = RaftGroup.valueOf(groupId(settings.clusterId()), settings.voters().stream()
                .map(v -> RaftPeer.newBuilder().setId("voter-" + v.id()).setAddress(v.address()).build()).toList());
        this.storage = new VoterStorage(settings.storageDir(), group.getGroupId(), settings.clusterId(), settings.nodeId());
    }

    /** A request forwarded to this node as the Ratis leader. */
    private CompletableFuture<byte[]> onRequestAtLeader(byte[] bytes) {
        return leaderLoop.onRequestAtLeader(bytes);
    }

    private static RaftPeer peer(VoterKey key, QuorumVoter voter) {
        return RaftPeer.newBuilder().setId(key.peerId()).setAddress(voter.address()).build();
    }

    /** The Raft group of a cluster: the same on every voter, derived from the cluster id. */
    static RaftGroupId groupId(String clusterId) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("skein-controller/" + clusterId).getBytes(StandardCharsets.UTF_8)));
    }

    public synchronized void start() throws IOException {
        Files.createDirectories(settings.storageDir());
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(settings.storageDir().toFile()));
        GrpcConfigKeys.Server.setHost(p, settings.bindHost());
        GrpcConfigKeys.Server.setPort(p, settings.self().port());
        // Heartbeats on the same stream as the entries they follow. On a separate channel (the Ratis
        // default) a follower handles a leader's heartbeat and its entries on two threads at once;
        // after a network partition, when the deposed leader must truncate the entries of its own
        // term, that race broke its log ("gap between start index ... and first entry to append",
        // then "Already running a method by ...") and closed its Raft server for good.
        GrpcConfigKeys.Server.setHeartbeatChannel(p, false);
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(400, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(800, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, settings.snapshotThreshold());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.max(1, Math.min(1024, settings.snapshotThreshold())));
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("1MB"));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, APPEND_BYTES);
        RaftServerConfigKeys.Log.setWriteBufferSize(p, LOG_WRITE_BUFFER);
        serverProperties = p;
        if (storage.isFresh()) {
            // no Raft state (a new or wiped disk): a new incarnation with a new key, running without
            // the group until the membership loop bootstraps the quorum or joins it
            self = VoterKey.newIncarnation(settings.nodeId());
            storage.format(self);
            server = buildServer(self, null);
        } else {
            // the configuration comes from the log; the one to start from if the log has none yet
            self = storage.identity();
            server = buildServer(self, initialGroup());
        }

        RaftProperties cp = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(cp, TimeDuration.valueOf(Math.max(500, settings.requestTimeoutMs() / 2),
                TimeUnit.MILLISECONDS));
        clientProperties = cp;
        client = newClient(cp);
        // the active controller proposes with its own client, so its proposals never queue behind the
        // requests this node forwarded with the other one
        proposer = newClient(cp);

        timers = Executors.newSingleThreadScheduledExecutor(daemon("skein-controller-" + settings.nodeId() + "-timer"));
        leaderLoop.start(timers);
        server.start();
        probe = new QuorumProbe(group.getGroupId(), settings.voters(), PROBE_TIMEOUT_MS);
        membership = Executors.newSingleThreadScheduledExecutor(daemon("skein-controller-" + settings.nodeId() + "-membership"));
        membership.execute(this::membershipStep);
        timers.scheduleWithFixedDelay(() -> leaderLoop.onLeader(leaderLoop::fenceExpiredBrokers), settings.fenceCheckIntervalMs(),
                settings.fenceCheckIntervalMs(), TimeUnit.MILLISECONDS);
        if (settings.autoLeaderRebalance()) {
            timers.scheduleWithFixedDelay(() -> leaderLoop.onLeader(leaderLoop::preferredLeaderElections),
                    settings.leaderImbalanceCheckIntervalMs(), settings.leaderImbalanceCheckIntervalMs(), TimeUnit.MILLISECONDS);
        }
        log.info("Controller quorum voter {} started as {} on {}:{} (group {}, voters {}, storage {}, {})", settings.nodeId(),
                self, settings.bindHost(), settings.self().port(), group.getGroupId(), settings.voters(), settings.storageDir(),
                storage.isFresh() ? "no metadata log yet" : "metadata log intact");
    }

    /**
     * The configuration an intact voter starts from before its log says otherwise: itself alone if
     * it bootstrapped the quorum (a crash before the first entry must not leave it without one),
     * the bare node ids for a quorum formed before voter keys, else none (a voter waiting to be
     * admitted neither votes nor campaigns).
     */
    private RaftGroup initialGroup() throws IOException {
        if (storage.isBootstrap()) {
            return RaftGroup.valueOf(group.getGroupId(), peer(self, settings.self()));
        }
        if (self.isLegacy()) {
            return RaftGroup.valueOf(group.getGroupId(), settings.voters().stream()
                    .map(v -> peer(new VoterKey(v.id(), VoterKey.LEGACY_DIRECTORY_ID), v)).toList());
        }
        return RaftGroup.valueOf(group.getGroupId());
    }

    private RaftServer buildServer(VoterKey key, RaftGroup initial) throws IOException {
        Parameters parameters = new Parameters();
        GrpcConfigKeys.Server.setServicesCustomizer(parameters, new PeerIdGuard(key.peerId()));
        RaftServer.Builder b = RaftServer.newBuilder()
                .setServerId(key.peerId())
                .setProperties(serverProperties)
                .setParameters(parameters)
                .setStateMachine(stateMachine)
                .setOption(RaftStorage.StartupOption.RECOVER);
        if (initial != null) {
            b.setGroup(initial);
        }
        return b.build();
    }

    /** A client that finds the active controller itself. */
    private RaftClient newClient(RaftProperties properties) {
        return newClient(properties, null);
    }

    /** A client that sends its first request to {@code leader} (null: it finds the leader itself). */
    private RaftClient newClient(RaftProperties properties, RaftPeerId leader) {
        return RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(clientGroup())
                .setLeaderId(leader)
                .setProperties(properties)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                        (int) Math.max(1, settings.requestTimeoutMs() / 100), TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                .build();
    }

    /**
     * A Ratis async client closes itself for good once a request exhausts its retry policy (a long
     * loss of quorum does that); later requests then fail with AlreadyClosedException forever. The
     * node must outlive a quorum loss, so a client that failed is replaced by a fresh one.
     */
    private void renewClientAfter(Throwable failure, boolean forProposals, RaftClient failed) {
        RaftClient broken;
        synchronized (clientLock) {
            broken = forProposals ? proposer : client;
            if (closed || broken == null || broken != failed) {
                return; // closing, or another request already replaced it
            }
            RaftClient fresh = newClient(clientProperties);
            if (forProposals) {
                proposer = fresh;
            } else {
                client = fresh;
            }
        }
        log.info("Node {} replaced its Ratis {} client after: {}", settings.nodeId(),
                forProposals ? "proposal" : "request", failure.toString());
        closeRetired(List.of(broken));
    }

    /**
     * The voters changed (bootstrap, a voter joined or was replaced). A Ratis client learns peers
     * only from a NotLeader answer, so one that last heard of a smaller configuration may keep
     * asking voters that left; a client replaced after a failure starts from this configuration.
     */
    private void onConfigurationChanged(List<RaftPeer> voters) {
        if (!voters.equals(knownVoters)) {
            knownVoters = List.copyOf(voters);
            log.info("Node {} sees controller voters {}", settings.nodeId(), voters);
        }
    }

    /**
     * A new leader was elected: clients still aiming at the old one (a Ratis client finds the new
     * one only after its requests to the old one fail, which may outlast a broker session) are
     * replaced by clients aiming at the new one. The old clients finish what they carry and are
     * closed later.
     */
    private void pointClientsAt(RaftPeerId leader) {
        RaftClient oldClient;
        RaftClient oldProposer;
        synchronized (clientLock) {
            if (closed || client == null || clientGroup().getPeer(leader) == null
                    || (leader.equals(client.getLeaderId()) && leader.equals(proposer.getLeaderId()))) {
                return;
            }
            oldClient = client;
            oldProposer = proposer;
            client = newClient(clientProperties, leader);
            proposer = newClient(clientProperties, leader);
        }
        List<RaftClient> old = List.of(oldClient, oldProposer);
        retired.addAll(old);
        try {
            timers.schedule(() -> closeRetired(old), 2 * settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException ignored) {
            // closing: close() closes every retired client
        }
    }

    private void closeRetired(List<RaftClient> clients) {
        for (RaftClient c : clients) {
            retired.remove(c);
            try {
                c.close();
            } catch (IOException | RuntimeException e) {
                log.debug("Closing a replaced Ratis client: {}", e.toString());
            }
        }
    }

    /** The group clients use: the voters of the last configuration seen, and every configured address none of them has. */
    private RaftGroup clientGroup() {
        List<RaftPeer> peers = new java.util.ArrayList<>(knownVoters);
        for (RaftPeer placeholder : group.getPeers()) {
            if (peers.stream().noneMatch(p -> p.getAddress().equals(placeholder.getAddress()))) {
                peers.add(placeholder);
            }
        }
        return RaftGroup.valueOf(group.getGroupId(), peers);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    // ---- membership: a voter takes its place in the quorum's configuration ----

    /**
     * One round of the membership loop, on its own thread, repeated until this voter is a voter of
     * its own configuration: an intact member is done at once; otherwise the other voters are
     * asked and {@link QuorumJoin} decides between bootstrapping the quorum, joining it (replacing
     * an old incarnation of this node) and waiting.
     */
    private void membershipStep() {
        if (closed || member) {
            return;
        }
        try {
            RaftServer.Division division = division();
            if (division != null && isVoterOf(division, self)) {
                member = true;
                log.info("Node {} is voter {} of the controller quorum (configuration {})", settings.nodeId(), self,
                        division.getRaftConf());
                return;
            }
            RaftPeer selfPeer = peer(self, settings.self());
            int lowest = settings.voters().stream().mapToInt(QuorumVoter::id).min().orElseThrow();
            switch (QuorumJoin.decide(selfPeer, division != null, lowest, probe.probeAll(settings.nodeId()))) {
                case QuorumJoin.Decision.Bootstrap b -> {
                    storage.markBootstrap();
                    addGroup(List.of(selfPeer));
                }
                case QuorumJoin.Decision.Join j -> {
                    if (division == null) {
                        // an empty configuration: the leader's log and snapshot land here, and this
                        // voter neither votes nor campaigns until its key is in a configuration
                        addGroup(List.of());
                    }
                    requestJoin(j);
                }
                case QuorumJoin.Decision.Admitted a -> note("admitted to the quorum, catching up");
                case QuorumJoin.Decision.Wait w -> note(w.reason());
            }
        } catch (IOException | RuntimeException e) {
            note("membership step failed: " + e);
        } finally {
            if (!closed && !member) {
                try {
                    membership.schedule(this::membershipStep, MEMBERSHIP_RETRY_MS, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException ignored) {
                    // closing
                }
            }
        }
    }

    private void addGroup(List<RaftPeer> voters) throws IOException {
        log.info("Node {} {} as voter {}", settings.nodeId(), voters.isEmpty() ? "joins the controller quorum"
                : "starts the controller quorum (no voter holds metadata yet)", self);
        RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), server.getId(),
                0, RaftGroup.valueOf(group.getGroupId(), voters)));
        if (!reply.isSuccess()) {
            throw new IOException("Could not start the controller group: " + reply.getException());
        }
    }

    /** Asks the leader for one configuration change (joint consensus, compare-and-set): old peer of this node out, this voter in. */
    private void requestJoin(QuorumJoin.Decision.Join j) throws IOException {
        log.info("Node {} asks the controller quorum to change its voters from {} to {}", settings.nodeId(),
                j.current(), j.next());
        RaftProperties p = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(Math.max(10_000, settings.requestTimeoutMs() * 2),
                TimeUnit.MILLISECONDS));
        // the voters to ask: those staying (an old peer of this node id shares this node's address)
        List<RaftPeer> ask = j.next().stream().filter(x -> !x.getId().equals(self.peerId())).toList();
        try (RaftClient admin = RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(RaftGroup.valueOf(group.getGroupId(), ask))
                .setProperties(p)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5, TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
                .build()) {
            RaftClientReply reply = admin.admin().setConfiguration(SetConfigurationRequest.Arguments.newBuilder()
                    .setServersInCurrentConf(j.current())
                    .setServersInNewConf(j.next())
                    .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
                    .build());
            if (!reply.isSuccess()) {
                throw new IOException("the quorum refused the change: " + reply.getException());
            }
            log.info("Node {}: the controller quorum now has voters {}", settings.nodeId(), j.next());
        }
    }

    private void note(String what) {
        if (!what.equals(lastMembershipNote)) {
            lastMembershipNote = what;
            log.info("Controller voter {} not yet in the quorum: {}", self, what);
        }
    }

    private RaftServer.Division division() {
        try {
            return server.getDivision(group.getGroupId());
        } catch (IOException notThere) {
            return null;
        }
    }

    private static boolean isVoterOf(RaftServer.Division division, VoterKey key) {
        var conf = division.getRaftConf();
        return conf.getPreviousPeers().isEmpty() && conf.getCurrentPeers().stream().anyMatch(p -> p.getId().equals(key.peerId()));
    }

    @Override
    public QuorumDescription quorum() {
        RaftServer.Division d = division();
        if (d == null) {
            return new QuorumDescription(-1, -1, -1, List.of());
        }
        var info = d.getInfo();
        int leader = info.getLeaderId() == null ? -1 : VoterKey.of(info.getLeaderId()).nodeId();
        List<QuorumDescription.Voter> voters = d.getRaftConf().getCurrentPeers().stream().map(p -> {
            VoterKey k = VoterKey.of(p.getId());
            long leo = p.getId().equals(self.peerId()) ? d.getRaftLog().getNextIndex() : -1;
            return new QuorumDescription.Voter(k.nodeId(), k.directoryId(), leo);
        }).toList();
        return new QuorumDescription(leader, info.getCurrentTerm(), d.getRaftLog().getLastCommittedIndex(), voters);
    }

    /** This voter's identity (node id + directory id); provisional until {@link #isQuorumMember}. */
    public VoterKey voterKey() {
        return self;
    }

    /** Whether this voter is a voter of the quorum's configuration, as its own log says. */
    public boolean isQuorumMember() {
        return member;
    }

    /** The voters of the configuration this node has applied; empty before it has joined a group. */
    public List<VoterKey> voters() {
        RaftServer.Division d = division();
        return d == null ? List.of() : d.getRaftConf().getCurrentPeers().stream().map(p -> VoterKey.of(p.getId())).toList();
    }

    // ---- the Controller contract: any node, forwarded to the active controller ----

    @Override
    public ClusterImage image() {
        return stateMachine.image();
    }

    @Override
    public void addListener(Consumer<ClusterImage> listener) {
        stateMachine.addListener(listener);
    }

    @Override
    public void subscribe(Consumer<ClusterImage> listener) {
        stateMachine.subscribe(listener);
    }

    @Override
    public boolean awaitMetadata(long offset, long timeoutMs) throws InterruptedException {
        return stateMachine.awaitApplied(offset, timeoutMs);
    }

    @Override
    public boolean catchUp(long timeoutMs) throws InterruptedException {
        if (closed) {
            return false;
        }
        if (isActive()) {
            // the active controller answers a request only once it has applied the request's entry
            return true;
        }
        return readBarrier.catchUp(timeoutMs, time, stateMachine::awaitApplied);
    }

    /** How many times this node was asked to catch up with the active controller (a voter that is not active). */
    long catchUps() {
        return readBarrier.catchUps();
    }

    /** The lock this node's metadata is applied under: a test holds it to make this node fall behind. */
    Object applyLock() {
        return stateMachine;
    }

    /** The applied metadata of this node, for tests and diagnostics. */
    public MetadataState state() {
        return stateMachine.state();
    }

    /** Runs on the event loop after a request was processed and before it is answered (tests hold the answer back). */
    void afterCommitHook(Consumer<ControllerRequest.Call> hook) {
        leaderLoop.afterCommitHook = hook;
    }

    /** Whether this node is the active controller (the Ratis leader, ready to serve). */
    public boolean isActive() {
        try {
            return server != null && server.getDivision(group.getGroupId()).getInfo().isLeaderReady();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Sends a request to the active controller and waits (bounded by {@code requestTimeoutMs}) until
     * this node has applied its outcome. Every attempt sends the same message with the same request
     * id: when the active controller changes while the request is on its way, or an attempt times
     * out, it is sent again, and the controller that gets it again answers with the outcome of the
     * log entry that answered it already, if any ({@link AppliedRequests}), instead of deciding it
     * anew; so a request takes effect at most once and its caller gets that effect's answer.
     */
    @Override
    ControllerReply call(ControllerRequest request) {
        if (closed) {
            throw new NotControllerException("The controller of node " + settings.nodeId() + " is shut down");
        }
        Message message = Message.valueOf(ByteString.copyFrom(ControllerRequest.encode(Uuid.randomUuid(), request)));
        long deadline = time.milliseconds() + settings.requestTimeoutMs();
        // an attempt gets half the time: a client that failed (closed after exhausting its retries, or
        // stuck on voters that left) is replaced and the request sent once more
        long attemptMs = Math.max(1, settings.requestTimeoutMs() / 2);
        RaftClientReply raftReply = null;
        int failures = 0;
        while (raftReply == null) {
            if (closed) {
                throw new NotControllerException("The controller of node " + settings.nodeId() + " is shut down");
            }
            RaftClient c = client;
            CompletableFuture<Integer> leaderChange = nextLeaderChange;
            int leaderAtSend = knownLeader;
            // unordered: requests of different threads (heartbeats, ISR changes) are independent, and an
            // ordered client holds every later request back behind one stuck at an unreachable leader
            CompletableFuture<RaftClientReply> future = c.async().sendReadOnlyUnordered(message);
            long attemptDeadline = Math.min(deadline, time.milliseconds() + attemptMs);
            try {
                while (true) {
                    long leftMs = attemptDeadline - time.milliseconds();
                    if (leftMs <= 0) {
                        throw new TimeoutException();
                    }
                    CompletableFuture.anyOf(future, leaderChange).get(leftMs, TimeUnit.MILLISECONDS);
                    if (future.isDone()) {
                        break;
                    }
                    int now = leaderChange.getNow(-1);
                    if (leaderAtSend >= 0 && now != leaderAtSend) {
                        // sent to a controller that is no longer active: it may hang there (a network
                        // partition), so the request goes to the new one. Without a known leader at
                        // sending time the client looks for it itself, so the request is left to finish.
                        future.cancel(true);
                        if (time.milliseconds() >= deadline) {
                            throw new NotControllerException("The active controller changed from node " + leaderAtSend
                                    + " to node " + now + " while the request was on its way");
                        }
                        log.info("Node {} sends a request again: the active controller changed from node {} to node {}",
                                settings.nodeId(), leaderAtSend, now);
                        break;
                    }
                    leaderChange = nextLeaderChange;
                }
                if (future.isDone() && !future.isCancelled()) {
                    RaftClientReply r = future.get();
                    if (notController(r) && time.milliseconds() + NOT_CONTROLLER_BACKOFF_MS < deadline) {
                        // the active controller could not commit in time (or is stepping down); its entry
                        // may still commit, so the request is sent again rather than given up
                        awaitLeaderChange(NOT_CONTROLLER_BACKOFF_MS);
                        continue;
                    }
                    raftReply = r;
                }
            } catch (TimeoutException e) {
                future.cancel(true);
                if (time.milliseconds() >= deadline) {
                    throw new NotControllerException("No active controller answered within " + settings.requestTimeoutMs() + " ms");
                }
                renewClientAfter(e, false, c);
            } catch (ExecutionException e) {
                renewClientAfter(e.getCause(), false, c);
                if (++failures > 1 || time.milliseconds() >= deadline) {
                    throw new NotControllerException("No active controller reachable: " + e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new NotControllerException("Interrupted while waiting for the active controller");
            }
        }
        if (!raftReply.isSuccess()) {
            throw new NotControllerException("The controller quorum refused the request: " + raftReply.getException());
        }
        ControllerReply reply = ControllerReply.decode(raftReply.getMessage().getContent().toByteArray()).throwIfError();
        try {
            if (!stateMachine.awaitApplied(reply.index(), settings.requestTimeoutMs())) {
                log.warn("Node {} has not applied the metadata log up to {} after {} ms", settings.nodeId(),
                        reply.index(), settings.requestTimeoutMs());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return reply;
    }

    /** Waits until this node learns of a new active controller, at most {@code maxMs}. */
    private void awaitLeaderChange(long maxMs) throws InterruptedException {
        try {
            nextLeaderChange.get(maxMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException noChange) {
            // sent again to the same controller
        }
    }

    private static boolean notController(RaftClientReply r) {
        if (!r.isSuccess()) {
            return false;
        }
        ControllerReply reply = ControllerReply.decode(r.getMessage().getContent().toByteArray());
        return reply.errorCode() == org.apache.kafka.common.protocol.Errors.NOT_CONTROLLER.code();
    }

    private void onLeaderChanged(RaftPeerId leader) {
        int leaderId = leader == null ? -1 : VoterKey.of(leader).nodeId();
        log.info("Node {} sees controller {} as the active controller", settings.nodeId(), leaderId);
        knownLeader = leaderId;
        if (leader != null) {
            pointClientsAt(leader);
        }
        // requests still on their way to the previous leader are abandoned (see call)
        CompletableFuture<Integer> fired = nextLeaderChange;
        nextLeaderChange = new CompletableFuture<>();
        fired.complete(leaderId);
        if (leaderId == settings.nodeId()) {
            leaderLoop.becameActive();
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (membership != null) {
            membership.shutdownNow();
        }
        if (probe != null) {
            try {
                probe.close();
            } catch (IOException e) {
                log.debug("Closing the quorum probe: {}", e.toString());
            }
        }
        if (timers != null) {
            timers.shutdownNow();
        }
        closeRetired(List.copyOf(retired));
        leaderLoop.close();
        try {
            if (client != null) {
                client.close();
            }
            if (proposer != null) {
                proposer.close();
            }
        } catch (IOException e) {
            log.warn("Error closing the Ratis client: {}", e.toString());
        }
        try {
            if (server != null) {
                server.close();
            }
        } catch (IOException e) {
            log.warn("Error closing the Ratis server: {}", e.toString());
        }
        log.info("Controller quorum voter {} stopped", settings.nodeId());
    }
}
