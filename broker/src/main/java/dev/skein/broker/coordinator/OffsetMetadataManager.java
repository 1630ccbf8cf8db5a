package dev.skein.broker.coordinator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiPredicate;
import java.util.function.Function;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.skein.broker.coordinator.CoordinatorRecords.OffsetValue;

/**
 * Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete, retention-based expiry and topic
 * deletion, with Kafka's semantics. Offsets live in their {@link ClassicGroup}; commits become visible
 * once the store has made them durable. Single-threaded like {@link GroupMetadataManager}.
 */
final class OffsetMetadataManager {
    private static final Logger log = LoggerFactory.getLogger(OffsetMetadataManager.class);
    private static final String NO_METADATA = "";

    private final GroupMetadataManager groups;
    private final GroupConfig config;
    private BiPredicate<String, Integer> partitionExists = (topic, partition) -> true;
    private Function<Uuid, String> topicNameForId = id -> null;
    private Function<String, Uuid> topicIdForName = name -> Uuid.ZERO_UUID;

    OffsetMetadataManager(GroupMetadataManager groups) {
        this.groups = groups;
        this.config = groups.config();
    }

    void setPartitionExists(BiPredicate<String, Integer> partitionExists) {
        this.partitionExists = partitionExists;
    }

    void setTopicIds(Function<Uuid, String> nameForId, Function<String, Uuid> idForName) {
        this.topicNameForId = nameForId;
        this.topicIdForName = idForName;
    }

    // ---------------------------------------------------------------- OffsetCommit

    CompletableFuture<OffsetCommitResponseData> commitOffsets(OffsetCommitRequestData req, short version, long nowMs) {
        String groupId = req.groupId();
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(ErrorResponses.commit(req, version, Errors.INVALID_GROUP_ID));
        }
        ClassicGroup group = groups.group(groupId);
        Errors error;
        if (group == null) {
            if (req.generationIdOrMemberEpoch() < 0) {
                // An admin client or a consumer without group management: a "simple" group is created.
                group = groups.getOrCreateGroup(groupId, nowMs);
                error = Errors.NONE;
            } else {
                // From v9 a missing group is reported as such; older clients expect ILLEGAL_GENERATION.
                error = version >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
            }
        } else {
            error = validateCommit(group, req);
        }
        if (error != Errors.NONE) {
            return CompletableFuture.completedFuture(ErrorResponses.commit(req, version, error));
        }
        if (req.memberId() != null && !req.memberId().isEmpty()) {
            groups.maintainSessionOnCommit(group, req.memberId(), nowMs);
        }

        long expireTimestampMs = version >= 2 && version <= 4 && req.retentionTimeMs() != -1 ? nowMs + req.retentionTimeMs() : -1;
        OffsetCommitResponseData resp = new OffsetCommitResponseData();
        List<CoordinatorRecord> records = new ArrayList<>();
        List<Runnable> applyOnSuccess = new ArrayList<>();
        List<OffsetCommitResponseData.OffsetCommitResponsePartition> accepted = new ArrayList<>();
        ClassicGroup target = group;
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : req.topics()) {
            OffsetCommitResponseData.OffsetCommitResponseTopic rt = new OffsetCommitResponseData.OffsetCommitResponseTopic();
            String topic;
            if (version >= 10) {
                rt.setTopicId(t.topicId());
                topic = topicNameForId.apply(t.topicId());
            } else {
                rt.setName(t.name());
                topic = t.name();
            }
            resp.topics().add(rt);
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                OffsetCommitResponseData.OffsetCommitResponsePartition rp =
                        new OffsetCommitResponseData.OffsetCommitResponsePartition().setPartitionIndex(p.partitionIndex());
                rt.partitions().add(rp);
                if (topic == null) {
                    rp.setErrorCode(Errors.UNKNOWN_TOPIC_ID.code());
                } else if (!partitionExists.test(topic, p.partitionIndex())) {
                    rp.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                } else if (p.committedMetadata() != null && p.committedMetadata().length() > GroupConfig.OFFSET_METADATA_MAX_SIZE) {
                    rp.setErrorCode(Errors.OFFSET_METADATA_TOO_LARGE.code());
                } else {
                    OffsetValue value = new OffsetValue(p.committedOffset(), p.committedLeaderEpoch(),
                            p.committedMetadata() == null ? NO_METADATA : p.committedMetadata(), nowMs, expireTimestampMs);
                    int partition = p.partitionIndex();
                    records.add(CoordinatorRecords.offsetCommit(groupId, topic, partition, value));
                    applyOnSuccess.add(() -> target.putOffset(topic, partition, value));
                    accepted.add(rp);
                }
            }
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(resp);
        }
        CompletableFuture<OffsetCommitResponseData> future = new CompletableFuture<>();
        groups.append(groupId, records, failure -> {
            if (failure != null) {
                Errors e = ErrorResponses.appendFailure(failure, true);
                accepted.forEach(rp -> rp.setErrorCode(e.code()));
            } else if (groups.group(groupId) == target) {
                applyOnSuccess.forEach(Runnable::run);
            }
            future.complete(resp);
        });
        return future;
    }

    /**
     * Kafka's rules for who may commit: generation -1 without member id is an admin or "simple" commit,
     * allowed only while the group is Empty; anything else must be a current member of the current
     * generation, and not while the group waits for its assignment.
     */
    private static Errors validateCommit(ClassicGroup group, OffsetCommitRequestData req) {
        if (group.isInState(GroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        int generation = req.generationIdOrMemberEpoch();
        String memberId = req.memberId() == null ? "" : req.memberId();
        String instanceId = req.groupInstanceId();
        if (generation < 0 && group.isInState(GroupState.EMPTY)) {
            return Errors.NONE;
        }
        if (generation >= 0 || !memberId.isEmpty() || instanceId != null) {
            Errors e = group.validateMember(memberId, instanceId);
            if (e != Errors.NONE) {
                return e;
            }
            if (generation != group.generationId()) {
                return Errors.ILLEGAL_GENERATION;
            }
        } else if (!group.isInState(GroupState.EMPTY)) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (group.isInState(GroupState.COMPLETING_REBALANCE)) {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        return Errors.NONE;
    }

    // ---------------------------------------------------------------- OffsetFetch

    /** One partition's fetch result. */
    private record PartitionOffset(int partition, long offset, int leaderEpoch, String metadata, Errors error) {
    }

    private record TopicOffsets(String name, Uuid topicId, List<PartitionOffset> partitions) {
    }

    OffsetFetchResponseData fetchOffsets(OffsetFetchRequestData req, short version) {
        OffsetFetchResponseData resp = new OffsetFetchResponseData();
        if (version >= 8) {
            for (OffsetFetchRequestData.OffsetFetchRequestGroup g : req.groups()) {
                OffsetFetchResponseData.OffsetFetchResponseGroup rg = new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(g.groupId());
                resp.groups().add(rg);
                if (g.groupId() == null) {
                    rg.setErrorCode(Errors.INVALID_GROUP_ID.code());
                    continue;
                }
                List<TopicOffsets> requested = null;
                if (g.topics() != null) {
                    requested = new ArrayList<>();
                    for (OffsetFetchRequestData.OffsetFetchRequestTopics t : g.topics()) {
                        String name = version >= 10 ? topicNameForId.apply(t.topicId()) : t.name();
                        requested.add(new TopicOffsets(name, t.topicId(), partitionsOf(t.partitionIndexes())));
                    }
                }
                for (TopicOffsets t : fetch(g.groupId(), requested, version >= 10)) {
                    OffsetFetchResponseData.OffsetFetchResponseTopics rt = new OffsetFetchResponseData.OffsetFetchResponseTopics();
                    if (version >= 10) {
                        rt.setTopicId(t.topicId());
                    } else {
                        rt.setName(t.name());
                    }
                    for (PartitionOffset p : t.partitions()) {
                        rt.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                                .setPartitionIndex(p.partition())
                                .setCommittedOffset(p.offset())
                                .setCommittedLeaderEpoch(p.leaderEpoch())
                                .setMetadata(p.metadata())
                                .setErrorCode(p.error().code()));
                    }
                    rg.topics().add(rt);
                }
            }
            return resp;
        }
        // As Kafka, for backwards compatibility the empty group id is a valid group to fetch from.
        if (req.groupId() == null) {
            return ErrorResponses.fetch(req, version, Errors.INVALID_GROUP_ID);
        }
        List<TopicOffsets> requested = null;
        if (req.topics() != null) {
            requested = new ArrayList<>();
            for (OffsetFetchRequestData.OffsetFetchRequestTopic t : req.topics()) {
                requested.add(new TopicOffsets(t.name(), Uuid.ZERO_UUID, partitionsOf(t.partitionIndexes())));
            }
        }
        for (TopicOffsets t : fetch(req.groupId(), requested, false)) {
            OffsetFetchResponseData.OffsetFetchResponseTopic rt = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(t.name());
            for (PartitionOffset p : t.partitions()) {
                rt.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition()
                        .setPartitionIndex(p.partition())
                        .setCommittedOffset(p.offset())
                        .setCommittedLeaderEpoch(p.leaderEpoch())
                        .setMetadata(p.metadata())
                        .setErrorCode(p.error().code()));
            }
            resp.topics().add(rt);
        }
        return resp;
    }

    private static List<PartitionOffset> partitionsOf(List<Integer> indexes) {
        List<PartitionOffset> out = new ArrayList<>(indexes.size());
        for (Integer p : indexes) {
            out.add(new PartitionOffset(p, -1, -1, NO_METADATA, Errors.NONE));
        }
        return out;
    }

    /** Committed offsets of the requested partitions (-1 when none), or of every partition when requested is null. */
    private List<TopicOffsets> fetch(String groupId, List<TopicOffsets> requested, boolean byTopicId) {
        ClassicGroup group = groups.group(groupId);
        List<TopicOffsets> out = new ArrayList<>();
        if (requested == null) {
            if (group != null) {
                group.offsets().forEach((topic, parts) -> {
                    List<PartitionOffset> ps = new ArrayList<>();
                    parts.forEach((p, v) -> ps.add(new PartitionOffset(p, v.offset(), v.leaderEpoch(), v.metadata(), Errors.NONE)));
                    out.add(new TopicOffsets(topic, byTopicId ? topicIdForName.apply(topic) : Uuid.ZERO_UUID, ps));
                });
            }
            return out;
        }
        for (TopicOffsets t : requested) {
            List<PartitionOffset> ps = new ArrayList<>();
            for (PartitionOffset p : t.partitions()) {
                if (t.name() == null) {
                    ps.add(new PartitionOffset(p.partition(), -1, -1, NO_METADATA, Errors.UNKNOWN_TOPIC_ID));
                    continue;
                }
                OffsetValue v = group == null ? null : group.offset(t.name(), p.partition());
                ps.add(v == null ? p : new PartitionOffset(p.partition(), v.offset(), v.leaderEpoch(), v.metadata(), Errors.NONE));
            }
            out.add(new TopicOffsets(t.name(), t.topicId(), ps));
        }
        return out;
    }

    // ---------------------------------------------------------------- OffsetDelete

    CompletableFuture<OffsetDeleteResponseData> deleteOffsets(OffsetDeleteRequestData req, short version, long nowMs) {
        String groupId = req.groupId();
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(ErrorResponses.deleteOffsets(Errors.INVALID_GROUP_ID));
        }
        ClassicGroup group = groups.group(groupId);
        if (group == null || group.isInState(GroupState.DEAD)) {
            return CompletableFuture.completedFuture(ErrorResponses.deleteOffsets(Errors.GROUP_ID_NOT_FOUND));
        }
        if (!group.isInState(GroupState.EMPTY) && !group.usesConsumerProtocol()) {
            return CompletableFuture.completedFuture(ErrorResponses.deleteOffsets(Errors.NON_EMPTY_GROUP));
        }
        OffsetDeleteResponseData resp = new OffsetDeleteResponseData();
        List<CoordinatorRecord> records = new ArrayList<>();
        for (OffsetDeleteRequestData.OffsetDeleteRequestTopic t : req.topics()) {
            OffsetDeleteResponseData.OffsetDeleteResponseTopic rt = new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(t.name());
            resp.topics().add(rt);
            boolean subscribed = !group.isInState(GroupState.EMPTY) && group.isSubscribedToTopic(t.name());
            for (OffsetDeleteRequestData.OffsetDeleteRequestPartition p : t.partitions()) {
                if (rt.partitions().find(p.partitionIndex()) != null) {
                    continue;
                }
                OffsetDeleteResponseData.OffsetDeleteResponsePartition rp =
                        new OffsetDeleteResponseData.OffsetDeleteResponsePartition().setPartitionIndex(p.partitionIndex());
                rt.partitions().add(rp);
                if (subscribed) {
                    rp.setErrorCode(Errors.GROUP_SUBSCRIBED_TO_TOPIC.code());
                } else if (group.removeOffset(t.name(), p.partitionIndex())) {
                    records.add(CoordinatorRecords.offsetTombstone(groupId, t.name(), p.partitionIndex()));
                }
            }
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(resp);
        }
        CompletableFuture<OffsetDeleteResponseData> future = new CompletableFuture<>();
        groups.append(groupId, records, failure -> {
            if (failure != null) {
                future.complete(ErrorResponses.deleteOffsets(ErrorResponses.appendFailure(failure, false)));
            } else {
                future.complete(resp);
            }
        });
        return future;
    }

    // ---------------------------------------------------------------- expiry and topic deletion

    /**
     * Expires offsets as Kafka does since 2.1 (KIP-211): in an Empty group, once the retention has
     * passed since the group became Empty; in a Stable consumer group, offsets of topics nobody
     * subscribes to once the retention has passed since their commit; in a simple group (no protocol),
     * since their commit. An explicit expire timestamp (OffsetCommit v2-4) wins. Empty groups left
     * without offsets are deleted.
     */
    void expireOffsets(long nowMs) {
        for (ClassicGroup group : new ArrayList<>(groups.groups().values())) {
            List<CoordinatorRecord> records = new ArrayList<>();
            Function<OffsetValue, Long> base = expiryBase(group);
            if (base != null) {
                for (Map.Entry<String, Map<Integer, OffsetValue>> e : new ArrayList<>(group.offsets().entrySet())) {
                    String topic = e.getKey();
                    if (group.isSubscribedToTopic(topic)) {
                        continue;
                    }
                    for (Map.Entry<Integer, OffsetValue> pe : new ArrayList<>(e.getValue().entrySet())) {
                        OffsetValue v = pe.getValue();
                        boolean expired = v.expireTimestampMs() >= 0 ? nowMs >= v.expireTimestampMs()
                                : nowMs - base.apply(v) >= config.offsetsRetentionMs();
                        if (expired) {
                            group.removeOffset(topic, pe.getKey());
                            records.add(CoordinatorRecords.offsetTombstone(group.groupId(), topic, pe.getKey()));
                        }
                    }
                }
            }
            if (!group.hasOffsets() && group.isInState(GroupState.EMPTY) && group.pendingJoinMembers().isEmpty()) {
                records.add(CoordinatorRecords.groupTombstone(group.groupId()));
                groups.removeGroup(group, nowMs);
            }
            if (!records.isEmpty()) {
                log.info("Expired {} records of group {}", records.size(), group.groupId());
                String groupId = group.groupId();
                groups.append(groupId, records, failure -> {
                    if (failure != null) {
                        log.warn("Failed to store expiry of group {}: {}", groupId, failure.toString());
                    }
                });
            }
        }
    }

    private static Function<OffsetValue, Long> expiryBase(ClassicGroup group) {
        if (group.protocolType() == null || group.protocolType().isEmpty()) {
            return OffsetValue::commitTimestampMs;
        }
        if (group.isInState(GroupState.EMPTY)) {
            long since = group.currentStateTimestampMs();
            return v -> since;
        }
        if (group.usesConsumerProtocol() && group.subscriptionsKnown() && group.isInState(GroupState.STABLE)) {
            return OffsetValue::commitTimestampMs;
        }
        return null;
    }

    /** Drops the committed offsets of deleted topics from every group, with tombstones. */
    void onTopicsDeleted(Collection<String> topics) {
        Map<String, List<CoordinatorRecord>> byGroup = new HashMap<>();
        for (ClassicGroup group : groups.groups().values()) {
            for (String topic : topics) {
                Map<Integer, OffsetValue> parts = group.offsets().get(topic);
                if (parts == null) {
                    continue;
                }
                for (Integer p : new ArrayList<>(parts.keySet())) {
                    group.removeOffset(topic, p);
                    byGroup.computeIfAbsent(group.groupId(), g -> new ArrayList<>())
                            .add(CoordinatorRecords.offsetTombstone(group.groupId(), topic, p));
                }
            }
        }
        byGroup.forEach((groupId, records) -> groups.append(groupId, records, failure -> {
            if (failure != null) {
                log.warn("Failed to store offset tombstones of deleted topics for group {}: {}", groupId, failure.toString());
            }
        }));
    }
}
