package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.ActiveController;
import dev.skein.broker.controller.AppliedRequests;
import dev.skein.broker.controller.BrokerHeartbeat;
import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.controller.MetadataCommand;
import dev.skein.broker.controller.MetadataEntry;
import dev.skein.broker.controller.MetadataState;
import dev.skein.broker.controller.QuorumDescription;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.utils.Time;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The active controller's half of a voter: what runs while this node is the Ratis leader. Requests
 * forwarded to it (the state machine's read-only {@code query}) are decided one at a time on one
 * event-loop thread, which owns the {@link ActiveController}'s in-memory state (heartbeat times,
 * brokers shutting down, a seeded {@code Random}); their commands are proposed as one log entry
 * with the proposal client, and each request is answered from the entry that took effect for it
 * (an earlier one when this is a retry, see {@link AppliedRequests}). The leader's periodic
 * decisions (fencing expired brokers, elections, reassignment completion, preferred leaders) run
 * on the same thread. Construction starts nothing; {@link #start} creates the event loop.
 */
final class ActiveControllerLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ActiveControllerLoop.class);

    /** The Ratis client this node proposes log entries with, replaced when it fails. */
    interface Proposals {
        RaftClient current();

        /** {@code client} failed with {@code cause}: the next proposal uses a fresh one. */
        void failed(Throwable cause, RaftClient client);
    }

    private final RaftControllerSettings settings;
    private final Time time;
    private final ActiveController logic;
    private final MetadataStateMachine stateMachine;
    private final Proposals proposals;
    private final Supplier<QuorumDescription> quorum;
    private final BooleanSupplier active;
    private final BooleanSupplier closed;
    private ExecutorService eventLoop;
    private ScheduledExecutorService timers;

    ActiveControllerLoop(RaftControllerSettings settings, Time time, ActiveController logic, MetadataStateMachine stateMachine,
                         Proposals proposals, Supplier<QuorumDescription> quorum, BooleanSupplier active,
                         BooleanSupplier closed) {
        this.settings = settings;
        this.time = time;
        this.logic = logic;
        this.stateMachine = stateMachine;
        this.proposals = proposals;
        this.quorum = quorum;
        this.active = active;
        this.closed = closed;
    }

    /** Creates the event loop; {@code timers} (the controller's) re-checks long polls. */
    synchronized void start(ScheduledExecutorService timers) {
        this.timers = timers;
        eventLoop = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "skein-controller-" + settings.nodeId() + "-event-loop");
            t.setDaemon(true);
            return t;
        });
    }

    /** This node just became the active controller: every registered broker gets a fresh session. */
    void becameActive() {
        if (closed.getAsBoolean()) {
            return;
        }
        try {
            eventLoop.execute(() -> logic.becameActive(stateMachine.state()));
        } catch (RejectedExecutionException ignored) {
            // shutting down
        }
    }

    /** A request that reached this node as the Ratis leader (the state machine's {@code query}); answered when decided. */
    CompletableFuture<byte[]> onRequestAtLeader(byte[] bytes) {
        CompletableFuture<byte[]> out = new CompletableFuture<>();
        ControllerRequest.Call decoded;
        try {
            decoded = ControllerRequest.decodeCall(bytes);
        } catch (RuntimeException e) {
            out.complete(ControllerReply.error(e, stateMachine.appliedIndex()).encode());
            return out;
        }
        if (decoded.request() instanceof ControllerRequest.ReadIndex) {
            // off the event loop: what this node has applied includes every change it acknowledged
            out.complete(ControllerReply.ok(0, stateMachine.appliedIndex(), null).encode());
            return out;
        }
        if (decoded.request() instanceof ControllerRequest.FetchMetadata f) {
            // off the event loop: a long poll must not hold up the decisions
            answerFetchMetadata(f, time.milliseconds() + Math.min(f.maxWaitMs(), 2_000), out);
            return out;
        }
        try {
            eventLoop.execute(() -> {
                ControllerReply reply;
                try {
                    Consumer<ControllerRequest.Call> hook = afterCommitHook;
                    reply = process(decoded.requestId(), decoded.request());
                    if (hook != null) {
                        hook.accept(decoded);
                    }
                } catch (ApiException e) {
                    reply = ControllerReply.error(e, stateMachine.appliedIndex());
                } catch (RuntimeException e) {
                    log.warn("Controller request failed: {}", e.toString());
                    reply = ControllerReply.error(e, stateMachine.appliedIndex());
                }
                out.complete(reply.encode());
            });
        } catch (RejectedExecutionException e) {
            out.complete(ControllerReply.error(new NotControllerException("The controller is shutting down"), -1).encode());
        }
        return out;
    }

    /**
     * Runs on the event loop after a request was processed and before it is answered (tests hold
     * the answer back there to lose it); null in production.
     */
    volatile Consumer<ControllerRequest.Call> afterCommitHook;

    /**
     * Answers a non-voter's metadata fetch with the whole applied state (value = the active
     * controller's id) once it is past the asker's index, re-checking every 20 ms until {@code deadlineMs}.
     */
    private void answerFetchMetadata(ControllerRequest.FetchMetadata f, long deadlineMs, CompletableFuture<byte[]> out) {
        MetadataStateMachine.View v = stateMachine.view();
        if (v.index() > f.sinceIndex() || time.milliseconds() >= deadlineMs || closed.getAsBoolean()) {
            byte[] state = v.index() > f.sinceIndex() ? MetadataCodec.encodeState(v.state()) : null;
            out.complete(ControllerReply.ok(v.leaderId(), v.index(), state).encode());
            return;
        }
        try {
            timers.schedule(() -> answerFetchMetadata(f, deadlineMs, out), 20, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            out.complete(ControllerReply.error(new NotControllerException("The controller is shutting down"), -1).encode());
        }
    }

    /**
     * Decides a request and commits its commands, or, for a request whose log entry was applied
     * already (this is a retry of it), answers from that entry's outcome without deciding again.
     * Either way the answer is built from the entry that took effect.
     */
    private ControllerReply process(Uuid requestId, ControllerRequest request) {
        MetadataState s = stateMachine.state();
        switch (request) {
            case ControllerRequest.FetchMetadata f -> throw new IllegalStateException("answered off the event loop");
            case ControllerRequest.ReadIndex r -> throw new IllegalStateException("answered off the event loop");
            case ControllerRequest.DescribeQuorum q -> {
                return ControllerReply.ok(0, stateMachine.appliedIndex(), QuorumCodec.encode(quorum.get()));
            }
            case ControllerRequest.CreateTopic c when c.validateOnly() -> {
                return validated(s, c.name(), logic.createTopic(s, c.name(), c.partitions(), c.replicationFactor(), c.configs()));
            }
            case ControllerRequest.CreatePartitions c when c.validateOnly() -> {
                return validated(s, c.topic(), logic.createPartitions(s, c.topic(), c.newCount()));
            }
            case ControllerRequest.CreateTopicAssigned c when c.validateOnly() -> {
                return validated(s, c.name(), logic.createTopic(s, c.name(), c.assignment(), c.configs()));
            }
            case ControllerRequest.CreatePartitionsAssigned c when c.validateOnly() -> {
                return validated(s, c.topic(), logic.createPartitions(s, c.topic(), c.newCount(), c.newAssignment()));
            }
            case ControllerRequest.AlterTopicConfigs a when a.validateOnly() -> {
                return validated(s, a.topic(), logic.alterTopicConfigs(s, a.topic(), a.configs()));
            }
            case ControllerRequest.IncrementalAlterTopicConfigs a when a.validateOnly() -> {
                return validated(s, a.topic(), logic.incrementalAlterTopicConfigs(s, a.topic(), a.ops()));
            }
            case ControllerRequest.IncrementalAlterBrokerConfigs a when a.validateOnly() -> {
                logic.incrementalAlterBrokerConfigs(s, a.resource(), a.ops());
                return ControllerReply.ok(0, stateMachine.appliedIndex(), null);
            }
            case ControllerRequest.AlterBrokerConfigs a when a.validateOnly() -> {
                logic.alterBrokerConfigs(s, a.resource(), a.configs());
                return ControllerReply.ok(0, stateMachine.appliedIndex(), null);
            }
            default -> {
            }
        }
        AppliedRequests.Outcome earlier = stateMachine.outcome(requestId);
        ControllerReply committed;
        if (earlier != null) {
            log.info("Controller request {} ({}) was applied at index {} already: answering with that outcome",
                    requestId, request.getClass().getSimpleName(), earlier.index());
            committed = ControllerReply.of(earlier).throwIfError();
        } else {
            committed = decideAndCommit(s, requestId, request);
        }
        return answer(request, committed);
    }

    /** Validates a request against {@code s}, proposes its commands (if any) and waits until they are applied. */
    private ControllerReply decideAndCommit(MetadataState s, Uuid requestId, ControllerRequest request) {
        List<MetadataCommand> commands = switch (request) {
            case ControllerRequest.CreateTopic c -> logic.createTopic(s, c.name(), c.partitions(), c.replicationFactor(),
                    c.configs());
            case ControllerRequest.DeleteTopic d -> logic.deleteTopic(s, d.topicId());
            case ControllerRequest.CreatePartitions c -> logic.createPartitions(s, c.topic(), c.newCount());
            case ControllerRequest.CreateTopicAssigned c -> logic.createTopic(s, c.name(), c.assignment(), c.configs());
            case ControllerRequest.CreatePartitionsAssigned c -> logic.createPartitions(s, c.topic(), c.newCount(),
                    c.newAssignment());
            case ControllerRequest.AlterTopicConfigs a -> logic.alterTopicConfigs(s, a.topic(), a.configs());
            case ControllerRequest.IncrementalAlterTopicConfigs a -> logic.incrementalAlterTopicConfigs(s, a.topic(), a.ops());
            case ControllerRequest.IncrementalAlterBrokerConfigs a -> logic.incrementalAlterBrokerConfigs(s, a.resource(),
                    a.ops());
            case ControllerRequest.AllocateProducerIds p -> List.of(new MetadataCommand.ProducerIdBlock(p.size()));
            case ControllerRequest.RegisterBroker r -> logic.registerBroker(s, r.broker());
            case ControllerRequest.Heartbeat h -> logic.heartbeat(s, h.brokerId(), h.brokerEpoch(), h.wantShutdown());
            case ControllerRequest.AlterBrokerConfigs a -> logic.alterBrokerConfigs(s, a.resource(), a.configs());
            case ControllerRequest.AlterPartition a -> logic.alterPartition(s, a.partition(), a.leaderId(), a.leaderEpoch(),
                    a.partitionEpoch(), a.newIsr());
            case ControllerRequest.AlterReassignment a -> logic.alterPartitionReassignment(s, a.partition(), a.target());
            case ControllerRequest.ElectLeader e -> logic.electLeader(s, ElectionType.valueOf(e.electionType()), e.partition());
            case ControllerRequest.FetchMetadata f -> throw new IllegalStateException("not a change");
            case ControllerRequest.DescribeQuorum q -> throw new IllegalStateException("not a change");
            case ControllerRequest.ReadIndex r -> throw new IllegalStateException("not a change");
        };
        // a request that changes nothing (a heartbeat of a live broker, a reassignment to the current
        // replicas) proposes nothing; its answer reflects what this node has applied
        return commands.isEmpty() ? ControllerReply.ok(0, stateMachine.appliedIndex(), null) : propose(requestId, commands);
    }

    /** The answer to a request whose commands were committed ({@code committed} is the outcome of their entry). */
    private ControllerReply answer(ControllerRequest request, ControllerReply committed) {
        MetadataState after = stateMachine.state();
        return switch (request) {
            case ControllerRequest.CreateTopic c -> withTopic(committed, after, c.name());
            case ControllerRequest.CreatePartitions c -> withTopic(committed, after, c.topic());
            case ControllerRequest.CreateTopicAssigned c -> withTopic(committed, after, c.name());
            case ControllerRequest.CreatePartitionsAssigned c -> withTopic(committed, after, c.topic());
            case ControllerRequest.AlterTopicConfigs a -> withTopic(committed, after, a.topic());
            case ControllerRequest.IncrementalAlterTopicConfigs a -> withTopic(committed, after, a.topic());
            case ControllerRequest.AlterPartition a -> withTopic(committed, after, a.partition().topic());
            // the epoch is the index of the entry, whatever the batch's last command yields
            case ControllerRequest.RegisterBroker r -> ControllerReply.ok(committed.index(), committed.index(), null);
            case ControllerRequest.Heartbeat h -> {
                BrokerHeartbeat hb = logic.heartbeatReply(after, h.brokerId(), h.wantShutdown());
                yield ControllerReply.ok((hb.fenced() ? 1 : 0) | (hb.shutdownAllowed() ? 2 : 0), committed.index(), null);
            }
            default -> committed;
        };
    }

    private static ControllerReply withTopic(ControllerReply committed, MetadataState s, String topic) {
        return ControllerReply.ok(committed.value(), committed.index(), topicBytes(s, topic));
    }

    /** The answer to a validate-only topic change: the topic as it would be, nothing proposed. */
    private ControllerReply validated(MetadataState s, String topic, List<MetadataCommand> commands) {
        return ControllerReply.ok(0, stateMachine.appliedIndex(), topicBytes(s.apply(commands, Long.MAX_VALUE).state(), topic));
    }

    private static byte[] topicBytes(MetadataState s, String topic) {
        TopicMetadata t = s.topic(topic);
        return MetadataCodec.encodeState(new MetadataState(Map.of(), t == null ? Map.of() : Map.of(topic, t), 0));
    }

    /** Appends {@code commands}, the controller's own decision, as one log entry and waits until it is applied. */
    private ControllerReply propose(List<MetadataCommand> commands) {
        return propose(null, commands);
    }

    /**
     * Appends {@code commands} as one log entry answering {@code requestId} and waits until it is
     * applied here; throws if it was rejected. The answer is that of the entry that took effect for
     * the request, which is an earlier one if a previous attempt of the request got there first.
     */
    private ControllerReply propose(Uuid requestId, List<MetadataCommand> commands) {
        long timeoutMs = settings.requestTimeoutMs() * 3 / 4;
        byte[] entry = MetadataCodec.encodeEntry(new MetadataEntry(requestId, commands));
        if (entry.length > RaftController.MAX_ENTRY_BYTES) {
            // refused here, not by Ratis: an entry too large to replicate would stop the log at it
            throw new PolicyViolationException("Unable to perform excessively large batch operation: the metadata change is "
                    + entry.length + " bytes (" + commands.size() + " command(s), the first "
                    + commands.getFirst().getClass().getSimpleName() + "), more than the " + RaftController.MAX_ENTRY_BYTES
                    + " bytes one entry of the metadata log may hold.");
        }
        RaftClient p = proposals.current();
        CompletableFuture<RaftClientReply> future = p.async().send(Message.valueOf(ByteString.copyFrom(entry)));
        try {
            RaftClientReply raftReply = future.get(timeoutMs, TimeUnit.MILLISECONDS);
            if (!raftReply.isSuccess()) {
                throw new NotControllerException("The metadata log refused the change: " + raftReply.getException());
            }
            ControllerReply reply = ControllerReply.decode(raftReply.getMessage().getContent().toByteArray());
            stateMachine.awaitApplied(reply.index(), timeoutMs);
            return reply.throwIfError();
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new NotControllerException("The metadata change was not committed within " + timeoutMs + " ms");
        } catch (ExecutionException e) {
            proposals.failed(e.getCause(), p);
            throw new NotControllerException("The metadata change failed: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NotControllerException("Interrupted while committing a metadata change");
        }
    }

    /** Runs a periodic task on the event loop, only while this node is the active controller. */
    void onLeader(Runnable task) {
        if (closed.getAsBoolean() || !active.getAsBoolean()) {
            return;
        }
        try {
            eventLoop.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.warn("Controller task failed: {}", e.toString());
                }
            });
        } catch (RejectedExecutionException ignored) {
            // shutting down
        }
    }

    void fenceExpiredBrokers() {
        MetadataState s = stateMachine.state();
        List<MetadataCommand> commands = logic.fenceExpiredBrokers(s);
        if (!commands.isEmpty()) {
            log.info("Fencing brokers whose session expired: {}", commands.stream()
                    .filter(c -> c instanceof MetadataCommand.FenceBroker).toList());
            propose(commands);
            s = stateMachine.state();
        }
        List<MetadataCommand> elections = logic.electOfflineLeaders(s);
        if (!elections.isEmpty()) {
            propose(elections);
            s = stateMachine.state();
        }
        // a reassignment whose ISR change raced with another change, or that waited for a live leader
        List<MetadataCommand> completions = logic.completeReassignments(s);
        if (!completions.isEmpty()) {
            log.info("Completing {} partition reassignment(s)", completions.size());
            propose(completions);
        }
    }

    void preferredLeaderElections() {
        List<MetadataCommand> commands = logic.preferredLeaderElections(stateMachine.state());
        if (!commands.isEmpty()) {
            log.info("Moving {} partition leadership(s) back to preferred replicas", commands.size());
            propose(commands);
        }
    }

    @Override
    public synchronized void close() {
        if (eventLoop != null) {
            eventLoop.shutdownNow();
        }
    }
}
