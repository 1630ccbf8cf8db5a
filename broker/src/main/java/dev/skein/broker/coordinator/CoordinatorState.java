package dev.skein.broker.coordinator;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiPredicate;
import java.util.function.Function;
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
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.skein.broker.coordinator.CoordinatorRecords.Decoded;
import dev.skein.broker.coordinator.CoordinatorRecords.GroupRecord;
import dev.skein.broker.coordinator.CoordinatorRecords.OffsetRecord;

/**
 * The whole coordinator state machine without a thread: the groups, their offsets and the timers.
 * Every method takes the current time and must be called from one thread; {@link #poll} fires due
 * timers and says how long until the next. {@link GroupCoordinator} drives it from its own thread;
 * tests drive it directly with a manual clock.
 */
final class CoordinatorState {
    private static final Logger log = LoggerFactory.getLogger(CoordinatorState.class);
    private static final String OFFSET_EXPIRY_KEY = "offset-expiry";

    private final GroupConfig config;
    private final DeadlineTimer timer = new DeadlineTimer();
    private final GroupMetadataManager groups;
    private final GroupAdmin admin;
    private final OffsetMetadataManager offsets;

    /**
     * @param owner runs store continuations on the owning thread (for a single-threaded test, a direct
     *              executor is fine if the store completes in the caller's thread)
     */
    CoordinatorState(GroupConfig config, OffsetStore store, Time time, Executor owner) {
        this.config = config;
        this.groups = new GroupMetadataManager(config, store, time, owner, timer);
        this.admin = new GroupAdmin(groups);
        this.offsets = new OffsetMetadataManager(groups);
    }

    void setPartitionExists(BiPredicate<String, Integer> partitionExists) {
        offsets.setPartitionExists(partitionExists);
    }

    void setTopicIds(Function<Uuid, String> nameForId, Function<String, Uuid> idForName) {
        offsets.setTopicIds(nameForId, idForName);
    }

    /** Applies one stored record during load; later records override earlier ones, tombstones delete. */
    void replay(CoordinatorRecord record, long nowMs) {
        Decoded decoded;
        try {
            decoded = CoordinatorRecords.decode(record);
        } catch (RuntimeException e) {
            log.warn("Skipping undecodable coordinator record: {}", e.toString());
            return;
        }
        switch (decoded) {
            case OffsetRecord r -> {
                if (r.value() == null) {
                    ClassicGroup g = groups.group(r.groupId());
                    if (g != null) {
                        g.removeOffset(r.topic(), r.partition());
                    }
                } else {
                    groups.getOrCreateGroup(r.groupId(), nowMs).putOffset(r.topic(), r.partition(), r.value());
                }
            }
            case GroupRecord r -> {
                ClassicGroup previous = groups.group(r.groupId());
                if (r.value() == null) {
                    groups.groups().remove(r.groupId());
                    if (previous != null && previous.hasOffsets()) {
                        // Offsets outlive their group's metadata: keep them in a simple group.
                        ClassicGroup simple = new ClassicGroup(r.groupId(), GroupState.EMPTY, nowMs);
                        simple.adoptOffsets(previous);
                        groups.putGroup(simple);
                    }
                } else {
                    ClassicGroup restored = ClassicGroup.restore(r.groupId(), r.value());
                    if (previous != null) {
                        restored.adoptOffsets(previous);
                    }
                    groups.putGroup(restored);
                }
            }
        }
    }

    /** Ends loading: restored members must heartbeat within their session timeout; offset expiry starts. */
    void onLoaded(long nowMs) {
        groups.onLoaded(nowMs);
        scheduleOffsetExpiry(nowMs);
    }

    /** Ends the load of the selected groups (one partition): restored members must heartbeat from now. */
    void onLoaded(Predicate<String> selected, long nowMs) {
        groups.onLoaded(selected, nowMs);
    }

    /** Starts the periodic offset expiry (once; loading partitions does not restart it). */
    void startOffsetExpiry(long nowMs) {
        scheduleOffsetExpiry(nowMs);
    }

    /** Forgets the selected groups (their partition moved away); returns how many. */
    int unload(Predicate<String> selected, long nowMs) {
        return groups.unload(selected, nowMs);
    }

    private void scheduleOffsetExpiry(long nowMs) {
        timer.schedule(OFFSET_EXPIRY_KEY, nowMs + config.offsetsRetentionCheckIntervalMs(), t -> {
            offsets.expireOffsets(t);
            scheduleOffsetExpiry(t);
        });
    }

    /** Fires every due timer; returns ms until the next deadline (Long.MAX_VALUE if none). */
    long poll(long nowMs) {
        return timer.poll(nowMs);
    }

    void shutdown() {
        groups.shutdown();
    }

    CompletableFuture<JoinGroupResponseData> joinGroup(JoinGroupRequestData req, short version, String clientId,
                                                       String clientHost, long nowMs) {
        return groups.joinGroup(req, version, clientId, clientHost, nowMs);
    }

    CompletableFuture<SyncGroupResponseData> syncGroup(SyncGroupRequestData req, short version, long nowMs) {
        return groups.syncGroup(req, version, nowMs);
    }

    HeartbeatResponseData heartbeat(HeartbeatRequestData req, short version, long nowMs) {
        return groups.heartbeat(req, version, nowMs);
    }

    LeaveGroupResponseData leaveGroup(LeaveGroupRequestData req, short version, long nowMs) {
        return groups.leaveGroup(req, version, nowMs);
    }

    CompletableFuture<OffsetCommitResponseData> commitOffsets(OffsetCommitRequestData req, short version, long nowMs) {
        return offsets.commitOffsets(req, version, nowMs);
    }

    OffsetFetchResponseData fetchOffsets(OffsetFetchRequestData req, short version) {
        return offsets.fetchOffsets(req, version);
    }

    ListGroupsResponseData listGroups(ListGroupsRequestData req, short version) {
        return admin.listGroups(req, version);
    }

    DescribeGroupsResponseData describeGroups(DescribeGroupsRequestData req, short version) {
        return admin.describeGroups(req, version);
    }

    CompletableFuture<DeleteGroupsResponseData> deleteGroups(DeleteGroupsRequestData req, short version, long nowMs) {
        return admin.deleteGroups(req, version, nowMs);
    }

    CompletableFuture<OffsetDeleteResponseData> deleteOffsets(OffsetDeleteRequestData req, short version, long nowMs) {
        return offsets.deleteOffsets(req, version, nowMs);
    }

    void onTopicsDeleted(Collection<String> topics) {
        offsets.onTopicsDeleted(topics);
    }

    /** For tests and diagnostics: the group's state, or null if the coordinator does not know it. */
    GroupState groupState(String groupId) {
        ClassicGroup g = groups.group(groupId);
        return g == null ? null : g.state();
    }

    ClassicGroup group(String groupId) {
        return groups.group(groupId);
    }
}
