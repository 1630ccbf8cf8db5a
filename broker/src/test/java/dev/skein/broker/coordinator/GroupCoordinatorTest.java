package dev.skein.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The threaded wrapper: lifecycle, hand-off to the coordinator thread, timers fired by its loop. */
@Timeout(30)
class GroupCoordinatorTest {
    private static final GroupConfig FAST = new GroupConfig(100, 60_000, 0, Integer.MAX_VALUE, 7L * 24 * 3600 * 1000, 600_000);
    private final ExecutorService storeThread = Executors.newSingleThreadExecutor();
    private GroupCoordinator coordinator;

    /** A store whose appends complete on its own thread, as the broker's log will. */
    private final class AsyncStore implements OffsetStore {
        final InMemoryOffsetStore inner = new InMemoryOffsetStore();

        @Override
        public CompletableFuture<Void> append(String groupId, List<CoordinatorRecord> records) {
            return CompletableFuture.supplyAsync(() -> inner.append(groupId, records), storeThread).thenCompose(f -> f);
        }

        @Override
        public void load(Consumer<CoordinatorRecord> sink) {
            inner.load(sink);
        }
    }

    @AfterEach
    void tearDown() {
        if (coordinator != null) {
            coordinator.close();
        }
        storeThread.shutdownNow();
    }

    private static JoinGroupRequestData join(String memberId, int sessionTimeoutMs) {
        return Harness.joinRequest("g", memberId).setSessionTimeoutMs(sessionTimeoutMs).setRebalanceTimeoutMs(5000);
    }

    private static OffsetFetchRequestData fetch(String topic, int partition) {
        return new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g")
                .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(topic).setPartitionIndexes(List.of(partition))))));
    }

    @Test
    void beforeStartEveryApiAnswersLoadInProgressExceptHeartbeat() throws Exception {
        coordinator = new GroupCoordinator(FAST, new AsyncStore(), Time.SYSTEM);
        assertThat(coordinator.fetchOffsets(fetch("t", 0), (short) 9).get().groups().get(0).errorCode())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS.code());
        assertThat(coordinator.joinGroup(join("", 6000), (short) 9, "c", "h").get().errorCode())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS.code());
        assertThat(coordinator.heartbeat(new HeartbeatRequestData().setGroupId("g").setMemberId("m"), (short) 4).get().errorCode())
                .isEqualTo(Errors.NONE.code());
    }

    @Test
    void startLoadsStoredOffsetsAndServesTheGroupProtocol() throws Exception {
        AsyncStore store = new AsyncStore();
        store.inner.append("g", List.of(CoordinatorRecords.offsetCommit("g", "t", 0, new CoordinatorRecords.OffsetValue(55, -1, "", 0, -1))));
        coordinator = new GroupCoordinator(FAST, store, Time.SYSTEM);
        coordinator.start();
        OffsetFetchResponseData fetched = coordinator.fetchOffsets(fetch("t", 0), (short) 9).get();
        assertThat(fetched.groups().get(0).topics().get(0).partitions().get(0).committedOffset()).isEqualTo(55);

        JoinGroupResponseData id = coordinator.joinGroup(join("", 6000), (short) 9, "client", "/10.0.0.1").get();
        assertThat(id.errorCode()).isEqualTo(Errors.MEMBER_ID_REQUIRED.code());
        CompletableFuture<JoinGroupResponseData> joined = coordinator.joinGroup(join(id.memberId(), 6000), (short) 9, "client", "/10.0.0.1");
        await().atMost(Duration.ofSeconds(5)).until(joined::isDone);
        assertThat(joined.get().generationId()).isEqualTo(1);
        SyncGroupResponseData synced = coordinator.syncGroup(new SyncGroupRequestData().setGroupId("g").setMemberId(id.memberId())
                .setGenerationId(1).setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment()
                        .setMemberId(id.memberId()).setAssignment(new byte[]{4}))), (short) 5).get();
        assertThat(synced.assignment()).containsExactly(4);

        assertThat(coordinator.commitOffsets(Harness.commitRequest("g", id.memberId(), 1, "t", 0, 56), (short) 9).get()
                .topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(coordinator.fetchOffsets(fetch("t", 0), (short) 9).get().groups().get(0).topics().get(0).partitions().get(0)
                .committedOffset()).isEqualTo(56);
    }

    @Test
    void sessionExpiryIsFiredByTheCoordinatorThread() throws Exception {
        coordinator = new GroupCoordinator(FAST, new AsyncStore(), Time.SYSTEM);
        coordinator.start();
        JoinGroupResponseData id = coordinator.joinGroup(join("", 300), (short) 9, "client", "h").get();
        CompletableFuture<JoinGroupResponseData> joined = coordinator.joinGroup(join(id.memberId(), 300), (short) 9, "client", "h");
        await().atMost(Duration.ofSeconds(5)).until(joined::isDone);
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(coordinator.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("g")), (short) 5).get()
                        .groups().get(0).groupState()).isEqualTo("Empty"));
    }

    @Test
    void closeAnswersParkedJoinsWithNotCoordinatorAndLaterRequestsWithCoordinatorNotAvailable() throws Exception {
        coordinator = new GroupCoordinator(new GroupConfig(100, 60_000, 60_000, Integer.MAX_VALUE, 7L * 24 * 3600 * 1000, 600_000),
                new AsyncStore(), Time.SYSTEM);
        coordinator.start();
        JoinGroupResponseData id = coordinator.joinGroup(join("", 6000), (short) 9, "client", "h").get();
        CompletableFuture<JoinGroupResponseData> parked = coordinator.joinGroup(join(id.memberId(), 6000), (short) 9, "client", "h");
        // The initial rebalance delay is a minute: the join stays parked until close.
        coordinator.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("g")), (short) 5).get();
        assertThat(parked).isNotDone();
        coordinator.close();
        assertThat(parked.get().errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(coordinator.heartbeat(new HeartbeatRequestData().setGroupId("g"), (short) 4).get().errorCode())
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE.code());
    }

    /** Two partitions: groups named "a..." live in partition 0, all others in partition 1. */
    private static final class TwoPartitionStore implements OffsetStore {
        final InMemoryOffsetStore[] parts = {new InMemoryOffsetStore(), new InMemoryOffsetStore()};

        @Override
        public CompletableFuture<Void> append(String groupId, List<CoordinatorRecord> records) {
            return parts[partitionFor(groupId)].append(groupId, records);
        }

        @Override
        public void load(Consumer<CoordinatorRecord> sink) {
            load(0, sink);
            load(1, sink);
        }

        @Override
        public int partitions() {
            return 2;
        }

        @Override
        public int partitionFor(String groupId) {
            return groupId.startsWith("a") ? 0 : 1;
        }

        @Override
        public void load(int partition, Consumer<CoordinatorRecord> sink) {
            parts[partition].load(sink);
        }
    }

    private static OffsetFetchRequestData fetch(String group, String topic, int partition) {
        return new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(group)
                .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(topic).setPartitionIndexes(List.of(partition))))));
    }

    private long committed(String group) throws Exception {
        OffsetFetchResponseData.OffsetFetchResponseGroup g = coordinator.fetchOffsets(fetch(group, "t", 0), (short) 9).get().groups().get(0);
        assertThat(g.errorCode()).as("fetch error of %s", group).isEqualTo(Errors.NONE.code());
        return g.topics().get(0).partitions().get(0).committedOffset();
    }

    @Test
    void aCoordinatorServesOnlyTheGroupsOfThePartitionsItWasElectedFor() throws Exception {
        TwoPartitionStore store = new TwoPartitionStore();
        store.append("a-group", List.of(CoordinatorRecords.offsetCommit("a-group", "t", 0,
                new CoordinatorRecords.OffsetValue(11, -1, "", 0, -1)))).get();
        store.append("b-group", List.of(CoordinatorRecords.offsetCommit("b-group", "t", 0,
                new CoordinatorRecords.OffsetValue(22, -1, "", 0, -1)))).get();
        coordinator = new GroupCoordinator(FAST, store, Time.SYSTEM);
        coordinator.startWithoutPartitions();

        assertThat(coordinator.fetchOffsets(fetch("a-group", "t", 0), (short) 9).get().groups().get(0).errorCode())
                .isEqualTo(Errors.NOT_COORDINATOR.code());
        coordinator.onElection(0, 3);
        assertThat(committed("a-group")).isEqualTo(11);
        assertThat(coordinator.fetchOffsets(fetch("b-group", "t", 0), (short) 9).get().groups().get(0).errorCode())
                .isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(coordinator.joinGroup(Harness.joinRequest("b-group", "").setSessionTimeoutMs(6000).setRebalanceTimeoutMs(5000),
                (short) 9, "c", "h").get().errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());

        // a request naming groups of both partitions: served for the one held, NOT_COORDINATOR for the other
        var described = coordinator.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("a-group", "b-group")), (short) 5).get();
        assertThat(described.groups()).hasSize(2);
        assertThat(described.groups().stream().filter(g -> g.groupId().equals("b-group")).findFirst().orElseThrow().errorCode())
                .isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(described.groups().stream().filter(g -> g.groupId().equals("a-group")).findFirst().orElseThrow().errorCode())
                .isEqualTo(Errors.NONE.code());
    }

    @Test
    void resignationForgetsThePartitionsGroupsAndReElectionLoadsWhatWasCommittedMeanwhile() throws Exception {
        TwoPartitionStore store = new TwoPartitionStore();
        coordinator = new GroupCoordinator(new GroupConfig(100, 60_000, 60_000, Integer.MAX_VALUE, 7L * 24 * 3600 * 1000, 600_000),
                store, Time.SYSTEM);
        coordinator.startWithoutPartitions();
        coordinator.onElection(1, 1);
        assertThat(coordinator.commitOffsets(Harness.commitRequest("b-group", "", -1, "t", 0, 5), (short) 9).get()
                .topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        JoinGroupResponseData id = coordinator.joinGroup(join2("b-group", ""), (short) 9, "client", "h").get();
        // the initial rebalance delay is a minute: this join stays parked
        CompletableFuture<JoinGroupResponseData> parked = coordinator.joinGroup(join2("b-group", id.memberId()), (short) 9, "client", "h");

        coordinator.onResignation(1, 1);
        assertThat(parked.get().errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(coordinator.fetchOffsets(fetch("b-group", "t", 0), (short) 9).get().groups().get(0).errorCode())
                .isEqualTo(Errors.NOT_COORDINATOR.code());

        // another coordinator committed while this one was not the leader; the log has it
        store.append("b-group", List.of(CoordinatorRecords.offsetCommit("b-group", "t", 0,
                new CoordinatorRecords.OffsetValue(9, -1, "", 0, -1)))).get();
        coordinator.onElection(1, 2);
        assertThat(committed("b-group")).isEqualTo(9);
        assertThat(coordinator.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("b-group")), (short) 5).get()
                .groups().get(0).groupState()).isEqualTo("Empty");
    }

    private static JoinGroupRequestData join2(String group, String memberId) {
        return Harness.joinRequest(group, memberId).setSessionTimeoutMs(6000).setRebalanceTimeoutMs(5000);
    }
}
