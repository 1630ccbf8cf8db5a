package dev.skein.broker.coordinator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Predicate;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's classic consumer-group coordinator (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit/Fetch/Delete, List/Describe/DeleteGroups) over an {@link OffsetStore}.
 *
 * <p>As in Kafka, the coordinator of a group is the leader of the group's {@code __consumer_offsets}
 * partition: {@link #onElection} loads that partition's groups and offsets (the broker calls it
 * when it becomes the partition's leader), {@link #onResignation} forgets them (when it stops
 * leading it). A request for a group of a partition this coordinator does not hold answers
 * NOT_COORDINATOR, so the client looks the coordinator up again. {@link #start} takes every
 * partition at once (a single broker, tests); {@link #startWithoutPartitions} waits for elections.
 *
 * <p>One thread owns all group state: public methods only enqueue an event and return a future,
 * which completes with the response to send (never exceptionally). The thread runs events, then
 * {@link CoordinatorState#poll} for timers (session, rebalance, initial delay, offset expiry) and
 * waits on the queue until the next deadline. Before {@link #start} has loaded the store every API
 * answers COORDINATOR_LOAD_IN_PROGRESS (Heartbeat: NONE, as Kafka); after {@link #close},
 * COORDINATOR_NOT_AVAILABLE (requests parked or queued at close: NOT_COORDINATOR).
 */
public final class GroupCoordinator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(GroupCoordinator.class);

    private enum Status { NEW, ACTIVE, CLOSED }

    private final OffsetStore store;
    private final Time time;
    private final LinkedBlockingQueue<Runnable> events = new LinkedBlockingQueue<>();
    private final CoordinatorState state;
    private volatile Status status = Status.NEW;
    private Thread thread;
    /** Guards {@link #drained}: once close has drained the queue, late store continuations run inline. */
    private final Object lateEvents = new Object();
    private boolean drained;
    /** The {@code __consumer_offsets} partitions whose groups this coordinator holds; coordinator thread only. */
    private final Set<Integer> owned = new HashSet<>();

    public GroupCoordinator(GroupConfig config, OffsetStore store, Time time) {
        this.store = store;
        this.time = time;
        this.state = new CoordinatorState(config, store, time, this::enqueue);
    }

    /**
     * Sets the broker's check that a topic partition exists (OffsetCommit answers
     * UNKNOWN_TOPIC_OR_PARTITION otherwise). Call before {@link #start}.
     */
    public void setPartitionExists(BiPredicate<String, Integer> partitionExists) {
        state.setPartitionExists(partitionExists);
    }

    /** Sets topic id lookups for OffsetCommit/OffsetFetch v10 (null name = unknown id). Call before {@link #start}. */
    public void setTopicIds(Function<Uuid, String> nameForId, Function<String, Uuid> idForName) {
        state.setTopicIds(nameForId, idForName);
    }

    /** Starts the coordinator thread holding every partition of the store (loaded first). */
    public synchronized void start() {
        startWithoutPartitions();
        for (int p = 0; p < store.partitions(); p++) {
            onElection(p, -1);
        }
    }

    /** Starts the coordinator thread holding no partition: {@link #onElection} brings them. */
    public synchronized void startWithoutPartitions() {
        if (status != Status.NEW) {
            throw new IllegalStateException("GroupCoordinator already " + status);
        }
        state.startOffsetExpiry(time.milliseconds());
        thread = new Thread(this::run, "group-coordinator");
        thread.setDaemon(true);
        status = Status.ACTIVE;
        thread.start();
    }

    /**
     * This broker now leads {@code __consumer_offsets} partition {@code partition}: loads its groups
     * and offsets (replacing anything held from an earlier term) and serves them. Requests queued
     * behind the load see the loaded state.
     */
    public void onElection(int partition, int leaderEpoch) {
        events.add(() -> load(partition, leaderEpoch));
    }

    /** This broker no longer leads {@code partition}: forgets its groups; their requests answer NOT_COORDINATOR. */
    public void onResignation(int partition, int leaderEpoch) {
        events.add(() -> unload(partition, leaderEpoch));
    }

    private void load(int partition, int leaderEpoch) {
        long start = time.milliseconds();
        owned.remove(partition);
        state.unload(inPartition(partition), start);
        int[] count = {0};
        try {
            store.load(partition, record -> {
                state.replay(record, time.milliseconds());
                count[0]++;
            });
        } catch (RuntimeException e) {
            state.unload(inPartition(partition), time.milliseconds());
            log.warn("Group coordinator could not load __consumer_offsets-{} (leader epoch {}): {}", partition,
                    leaderEpoch, e.toString());
            return;
        }
        state.onLoaded(inPartition(partition), time.milliseconds());
        owned.add(partition);
        log.info("Group coordinator loaded {} records of __consumer_offsets-{} (leader epoch {}) in {} ms", count[0],
                partition, leaderEpoch, time.milliseconds() - start);
    }

    private void unload(int partition, int leaderEpoch) {
        boolean held = owned.remove(partition);
        int groups = state.unload(inPartition(partition), time.milliseconds());
        if (held || groups > 0) {
            log.info("Group coordinator gave up __consumer_offsets-{} (leader epoch {}) and {} group(s)", partition,
                    leaderEpoch, groups);
        }
    }

    private Predicate<String> inPartition(int partition) {
        return groupId -> store.partitionFor(groupId) == partition;
    }

    /** NONE if this coordinator holds {@code groupId}'s partition (or the id is invalid: the API says so), else NOT_COORDINATOR. */
    private Errors ownership(String groupId) {
        if (groupId == null || groupId.isEmpty() || owned.contains(store.partitionFor(groupId))) {
            return Errors.NONE;
        }
        return Errors.NOT_COORDINATOR;
    }

    /** Stops the thread; parked JoinGroup/SyncGroup requests and queued events answer NOT_COORDINATOR. */
    @Override
    public synchronized void close() {
        if (status == Status.CLOSED) {
            return;
        }
        Status was = status;
        status = Status.CLOSED;
        if (was == Status.ACTIVE) {
            events.add(() -> { });
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            state.shutdown();
        }
        synchronized (lateEvents) {
            List<Runnable> leftover = new ArrayList<>();
            events.drainTo(leftover);
            leftover.forEach(GroupCoordinator::runSafely);
            drained = true;
        }
    }

    /**
     * Hands a store continuation to the coordinator thread. After close it runs inline, serialised by a
     * lock, so a request waiting for a durable append is still answered.
     */
    private void enqueue(Runnable event) {
        synchronized (lateEvents) {
            if (drained) {
                runSafely(event);
                return;
            }
            events.add(event);
        }
    }

    private void run() {
        long waitMs = 0;
        while (status == Status.ACTIVE) {
            try {
                Runnable event = events.poll(Math.max(0, Math.min(waitMs, Integer.MAX_VALUE)), TimeUnit.MILLISECONDS);
                while (event != null && status == Status.ACTIVE) {
                    runSafely(event);
                    event = events.poll();
                }
                if (status != Status.ACTIVE) {
                    if (event != null) {
                        events.add(event);
                    }
                    break;
                }
                waitMs = state.poll(time.milliseconds());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (RuntimeException e) {
                log.error("Unexpected error in group coordinator loop", e);
                waitMs = 0;
            }
        }
    }

    private static void runSafely(Runnable event) {
        try {
            event.run();
        } catch (RuntimeException e) {
            log.error("Unexpected error in group coordinator event", e);
        }
    }

    /**
     * Runs an operation on the coordinator thread; the result future completes with its response, or
     * with {@code onError}'s answer if the coordinator is not active, does not hold {@code groupId}
     * (null: not about one group), or the operation failed.
     */
    private <T> CompletableFuture<T> submit(String groupId, LongFunction<CompletableFuture<T>> op,
                                            Function<Errors, T> onError, Errors whileLoading) {
        Status s = status;
        if (s == Status.NEW) {
            return CompletableFuture.completedFuture(onError.apply(whileLoading));
        }
        if (s == Status.CLOSED) {
            return CompletableFuture.completedFuture(onError.apply(Errors.COORDINATOR_NOT_AVAILABLE));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        events.add(() -> {
            if (status != Status.ACTIVE) {
                result.complete(onError.apply(Errors.NOT_COORDINATOR));
                return;
            }
            Errors notHeld = groupId == null ? Errors.NONE : ownership(groupId);
            if (notHeld != Errors.NONE) {
                result.complete(onError.apply(notHeld));
                return;
            }
            try {
                op.apply(time.milliseconds()).whenComplete((r, e) -> {
                    if (e != null) {
                        log.error("Group coordinator operation failed", e);
                        result.complete(onError.apply(Errors.UNKNOWN_SERVER_ERROR));
                    } else {
                        result.complete(r);
                    }
                });
            } catch (RuntimeException e) {
                log.error("Group coordinator operation failed", e);
                result.complete(onError.apply(Errors.UNKNOWN_SERVER_ERROR));
            }
        });
        return result;
    }

    private <T> CompletableFuture<T> submit(String groupId, LongFunction<CompletableFuture<T>> op, Function<Errors, T> onError) {
        return submit(groupId, op, onError, Errors.COORDINATOR_LOAD_IN_PROGRESS);
    }

    /** The ids among {@code groupIds} this coordinator does not hold (coordinator thread only). */
    private List<String> notHeld(List<String> groupIds) {
        return groupIds.stream().filter(g -> ownership(g) != Errors.NONE).toList();
    }

    public CompletableFuture<JoinGroupResponseData> joinGroup(JoinGroupRequestData req, short version, String clientId, String clientHost) {
        return submit(req.groupId(), now -> state.joinGroup(req, version, clientId, clientHost, now),
                e -> shapeJoinError(req, version, e));
    }

    private static JoinGroupResponseData shapeJoinError(JoinGroupRequestData req, short version, Errors e) {
        JoinGroupResponseData r = ErrorResponses.join(req, e);
        if (version >= 7) {
            r.setProtocolName(null);
        }
        return r;
    }

    public CompletableFuture<SyncGroupResponseData> syncGroup(SyncGroupRequestData req, short version) {
        return submit(req.groupId(), now -> state.syncGroup(req, version, now), ErrorResponses::sync);
    }

    public CompletableFuture<HeartbeatResponseData> heartbeat(HeartbeatRequestData req, short version) {
        return submit(req.groupId(), now -> CompletableFuture.completedFuture(state.heartbeat(req, version, now)),
                ErrorResponses::heartbeat, Errors.NONE);
    }

    public CompletableFuture<LeaveGroupResponseData> leaveGroup(LeaveGroupRequestData req, short version) {
        return submit(req.groupId(), now -> CompletableFuture.completedFuture(state.leaveGroup(req, version, now)),
                ErrorResponses::leave);
    }

    public CompletableFuture<OffsetCommitResponseData> commitOffsets(OffsetCommitRequestData req, short version) {
        return submit(req.groupId(), now -> state.commitOffsets(req, version, now), e -> ErrorResponses.commit(req, version, e));
    }

    /** v8+ answers in the groups array; v1-7 for the single group. */
    public CompletableFuture<OffsetFetchResponseData> fetchOffsets(OffsetFetchRequestData req, short version) {
        if (version < 8) {
            return submit(req.groupId(), now -> CompletableFuture.completedFuture(state.fetchOffsets(req, version)),
                    e -> ErrorResponses.fetch(req, version, e));
        }
        return submit(null, now -> {
            List<String> others = notHeld(req.groups().stream().map(OffsetFetchRequestData.OffsetFetchRequestGroup::groupId).toList());
            if (others.isEmpty()) {
                return CompletableFuture.completedFuture(state.fetchOffsets(req, version));
            }
            OffsetFetchRequestData held = req.duplicate();
            held.groups().removeIf(g -> others.contains(g.groupId()));
            OffsetFetchRequestData elsewhere = req.duplicate();
            elsewhere.groups().removeIf(g -> !others.contains(g.groupId()));
            OffsetFetchResponseData resp = held.groups().isEmpty() ? new OffsetFetchResponseData() : state.fetchOffsets(held, version);
            resp.groups().addAll(ErrorResponses.fetch(elsewhere, version, Errors.NOT_COORDINATOR).groups());
            return CompletableFuture.completedFuture(resp);
        }, e -> ErrorResponses.fetch(req, version, e));
    }

    public CompletableFuture<ListGroupsResponseData> listGroups(ListGroupsRequestData req, short version) {
        return submit(null, now -> CompletableFuture.completedFuture(state.listGroups(req, version)), ErrorResponses::listGroups);
    }

    public CompletableFuture<DescribeGroupsResponseData> describeGroups(DescribeGroupsRequestData req, short version) {
        return submit(null, now -> {
            List<String> others = notHeld(req.groups());
            if (others.isEmpty()) {
                return CompletableFuture.completedFuture(state.describeGroups(req, version));
            }
            DescribeGroupsRequestData held = req.duplicate();
            held.groups().removeAll(others);
            DescribeGroupsResponseData resp = state.describeGroups(held, version);
            resp.groups().addAll(ErrorResponses.describeGroups(new DescribeGroupsRequestData().setGroups(new ArrayList<>(others)),
                    Errors.NOT_COORDINATOR).groups());
            return CompletableFuture.completedFuture(resp);
        }, e -> ErrorResponses.describeGroups(req, e));
    }

    public CompletableFuture<DeleteGroupsResponseData> deleteGroups(DeleteGroupsRequestData req, short version) {
        return submit(null, now -> {
            List<String> others = notHeld(req.groupsNames());
            if (others.isEmpty()) {
                return state.deleteGroups(req, version, now);
            }
            DeleteGroupsRequestData held = req.duplicate();
            held.groupsNames().removeAll(others);
            DeleteGroupsResponseData elsewhere = ErrorResponses.deleteGroups(
                    new DeleteGroupsRequestData().setGroupsNames(new ArrayList<>(others)), Errors.NOT_COORDINATOR);
            return state.deleteGroups(held, version, now).thenApply(resp -> {
                elsewhere.results().forEach(r -> resp.results().add(r.duplicate()));
                return resp;
            });
        }, e -> ErrorResponses.deleteGroups(req, e));
    }

    public CompletableFuture<OffsetDeleteResponseData> deleteOffsets(OffsetDeleteRequestData req, short version) {
        return submit(req.groupId(), now -> state.deleteOffsets(req, version, now), ErrorResponses::deleteOffsets);
    }

    /** Called on topic deletion: drops committed offsets of these topics (with tombstones). */
    public void onTopicsDeleted(Collection<String> topics) {
        List<String> copy = List.copyOf(topics);
        submit(null, now -> {
            state.onTopicsDeleted(copy);
            return CompletableFuture.completedFuture(null);
        }, e -> null);
    }
}
