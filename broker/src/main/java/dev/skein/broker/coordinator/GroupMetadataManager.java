package dev.skein.broker.coordinator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The classic group membership protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and the
 * group-level admin APIs (ListGroups, DescribeGroups, DeleteGroups), with Kafka's semantics and error
 * codes.
 *
 * <p>Single-threaded: every method must run on the owning thread, takes the current time, and
 * completes the returned futures either at once or later from {@link #poll} (timers) or from a store
 * continuation, which the owner's {@link Executor} runs on the owning thread. Join and sync responses
 * wait in the members' parked futures until the state machine decides.
 */
final class GroupMetadataManager {
    private static final Logger log = LoggerFactory.getLogger(GroupMetadataManager.class);

    private final GroupConfig config;
    private final OffsetStore store;
    private final Time time;
    private final Executor owner;
    private final DeadlineTimer timer;
    private final Map<String, ClassicGroup> groups = new HashMap<>();

    GroupMetadataManager(GroupConfig config, OffsetStore store, Time time, Executor owner, DeadlineTimer timer) {
        this.config = config;
        this.store = store;
        this.time = time;
        this.owner = owner;
        this.timer = timer;
    }

    GroupConfig config() {
        return config;
    }

    ClassicGroup group(String groupId) {
        return groups.get(groupId);
    }

    Map<String, ClassicGroup> groups() {
        return groups;
    }

    ClassicGroup getOrCreateGroup(String groupId, long nowMs) {
        return groups.computeIfAbsent(groupId, id -> new ClassicGroup(id, GroupState.EMPTY, nowMs));
    }

    /** Replaces a group wholesale (log replay). */
    void putGroup(ClassicGroup group) {
        groups.put(group.groupId(), group);
    }

    /** Marks the group Dead, forgets it and cancels its timers. */
    void removeGroup(ClassicGroup group, long nowMs) {
        if (groups.get(group.groupId()) == group) {
            groups.remove(group.groupId());
        }
        group.transitionTo(GroupState.DEAD, nowMs);
        timer.cancel(joinKey(group));
        timer.cancel(syncKey(group));
        for (GroupMember m : group.members()) {
            timer.cancel(heartbeatKey(group, m.memberId()));
        }
        for (String pending : group.pendingJoinMembers()) {
            timer.cancel(pendingKey(group, pending));
        }
    }

    /**
     * Appends records for a group and runs {@code then} with the failure (null on success) on the
     * owning thread. Callers make this their last step: with a synchronous store and executor the
     * continuation runs before append returns.
     */
    void append(String groupId, List<CoordinatorRecord> records, Consumer<Throwable> then) {
        CompletableFuture<Void> f;
        try {
            f = store.append(groupId, records);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((v, e) -> owner.execute(() -> then.accept(e)));
    }

    long nowMs() {
        return time.milliseconds();
    }

    // ---------------------------------------------------------------- JoinGroup

    CompletableFuture<JoinGroupResponseData> joinGroup(JoinGroupRequestData req, short version, String clientId,
                                                       String clientHost, long nowMs) {
        CompletableFuture<JoinGroupResponseData> parked = new CompletableFuture<>();
        CompletableFuture<JoinGroupResponseData> out = parked.thenApply(r -> shapeJoin(r, version));
        doJoin(req, version, clientId, clientHost, parked, nowMs);
        return out;
    }

    /** Fields a version cannot carry get their defaults (ProtocolName is non-null before v7). */
    private static JoinGroupResponseData shapeJoin(JoinGroupResponseData r, short version) {
        if (version < 7 && r.protocolName() == null) {
            r.setProtocolName("");
        }
        if (version < 9) {
            r.setSkipAssignment(false);
        }
        return r;
    }

    private void doJoin(JoinGroupRequestData req, short version, String clientId, String clientHost,
                        CompletableFuture<JoinGroupResponseData> future, long nowMs) {
        String groupId = req.groupId();
        String memberId = req.memberId() == null ? "" : req.memberId();
        if (groupId == null || groupId.isEmpty()) {
            future.complete(ErrorResponses.join(memberId, Errors.INVALID_GROUP_ID));
            return;
        }
        int sessionTimeoutMs = req.sessionTimeoutMs();
        if (sessionTimeoutMs < config.groupMinSessionTimeoutMs() || sessionTimeoutMs > config.groupMaxSessionTimeoutMs()) {
            future.complete(ErrorResponses.join(memberId, Errors.INVALID_SESSION_TIMEOUT));
            return;
        }
        boolean unknownMember = memberId.isEmpty();
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            if (!unknownMember) {
                future.complete(ErrorResponses.join(memberId, Errors.UNKNOWN_MEMBER_ID));
                return;
            }
            group = getOrCreateGroup(groupId, nowMs);
        }
        if (!acceptJoiningMember(group, memberId)) {
            if (group.hasMember(memberId)) {
                removeMemberAndUpdateGroup(group, group.member(memberId), nowMs);
            } else if (group.isPendingMember(memberId)) {
                removePendingMember(group, memberId, nowMs);
            }
            future.complete(ErrorResponses.join("", Errors.GROUP_MAX_SIZE_REACHED));
            return;
        }
        JoinRequest join = JoinRequest.of(req, version, clientId, clientHost);
        if (group.isInState(GroupState.DEAD)) {
            future.complete(ErrorResponses.join(memberId, Errors.COORDINATOR_NOT_AVAILABLE));
        } else if (!group.supportsProtocols(join.protocolType(), join.protocols())) {
            future.complete(ErrorResponses.join(memberId, Errors.INCONSISTENT_GROUP_PROTOCOL));
        } else if (unknownMember) {
            joinNewMember(group, join, future, nowMs);
        } else {
            joinExistingMember(group, join, future, nowMs);
        }
    }

    /** A JoinGroup request, normalised across versions. */
    record JoinRequest(String memberId, String groupInstanceId, String clientId, String clientHost, String protocolType,
                       List<GroupMember.Protocol> protocols, int sessionTimeoutMs, int rebalanceTimeoutMs,
                       short version) {
        static JoinRequest of(JoinGroupRequestData req, short version, String clientId, String clientHost) {
            List<GroupMember.Protocol> protocols = new ArrayList<>();
            for (JoinGroupRequestData.JoinGroupRequestProtocol p : req.protocols()) {
                protocols.add(new GroupMember.Protocol(p.name(), p.metadata()));
            }
            int rebalanceTimeoutMs = version == 0 || req.rebalanceTimeoutMs() < 0 ? req.sessionTimeoutMs() : req.rebalanceTimeoutMs();
            return new JoinRequest(req.memberId() == null ? "" : req.memberId(), version >= 5 ? req.groupInstanceId() : null,
                    clientId == null ? "" : clientId, clientHost == null ? "" : clientHost,
                    req.protocolType() == null ? "" : req.protocolType(), protocols, req.sessionTimeoutMs(),
                    rebalanceTimeoutMs, version);
        }

        /** KIP-394: from v4 a dynamic member must first fetch its member id. */
        boolean requireKnownMemberId() {
            return version >= 4 && groupInstanceId == null;
        }
    }

    private boolean acceptJoiningMember(ClassicGroup group, String memberId) {
        return switch (group.state()) {
            case EMPTY, DEAD -> true;
            case PREPARING_REBALANCE -> (group.hasMember(memberId) && group.member(memberId).isAwaitingJoin())
                    || group.numAwaitingJoin() < config.groupMaxSize();
            case COMPLETING_REBALANCE, STABLE -> group.hasMember(memberId) || group.size() < config.groupMaxSize();
        };
    }

    private void joinNewMember(ClassicGroup group, JoinRequest join, CompletableFuture<JoinGroupResponseData> future, long nowMs) {
        String newMemberId = join.clientId() + "-" + UUID.randomUUID();
        if (join.groupInstanceId() != null) {
            String existing = group.staticMemberId(join.groupInstanceId());
            if (existing != null) {
                updateStaticMemberAndRebalance(group, join, existing, newMemberId, future, nowMs);
            } else {
                addMemberAndRebalance(group, join, newMemberId, future, nowMs);
            }
        } else if (join.requireKnownMemberId()) {
            group.addPendingMember(newMemberId);
            String groupId = group.groupId();
            timer.schedule(pendingKey(group, newMemberId), nowMs + join.sessionTimeoutMs(), t -> {
                ClassicGroup g = groups.get(groupId);
                if (g == group && g.isPendingMember(newMemberId)) {
                    removePendingMember(g, newMemberId, t);
                }
            });
            future.complete(ErrorResponses.join(newMemberId, Errors.MEMBER_ID_REQUIRED));
        } else {
            addMemberAndRebalance(group, join, newMemberId, future, nowMs);
        }
    }

    private void joinExistingMember(ClassicGroup group, JoinRequest join, CompletableFuture<JoinGroupResponseData> future, long nowMs) {
        String memberId = join.memberId();
        if (group.isPendingMember(memberId)) {
            if (join.groupInstanceId() != null) {
                // Pending members are dynamic by construction; a static id here is a client bug.
                future.complete(ErrorResponses.join(memberId, Errors.UNKNOWN_MEMBER_ID));
                return;
            }
            addMemberAndRebalance(group, join, memberId, future, nowMs);
            return;
        }
        Errors error = group.validateMember(memberId, join.groupInstanceId());
        if (error != Errors.NONE) {
            future.complete(ErrorResponses.join(memberId, error));
            return;
        }
        GroupMember member = group.member(memberId);
        switch (group.state()) {
            case PREPARING_REBALANCE -> updateMemberAndRebalance(group, member, join, future, nowMs);
            case COMPLETING_REBALANCE -> {
                if (member.matches(join.protocols())) {
                    // The member lost its JoinGroup response: answer again for the current generation.
                    future.complete(joinResponse(group, member, group.isLeader(memberId)));
                } else {
                    updateMemberAndRebalance(group, member, join, future, nowMs);
                }
            }
            case STABLE -> {
                if (group.isLeader(memberId) || !member.matches(join.protocols())) {
                    // The leader rejoins to force a rebalance (e.g. topic metadata changed); anyone rejoins on new metadata.
                    log.info("Member {} of stable group {} rejoins ({})", memberId, group.groupId(),
                            group.isLeader(memberId) ? "the leader" : "new subscription metadata");
                    updateMemberAndRebalance(group, member, join, future, nowMs);
                } else {
                    future.complete(joinResponse(group, member, false));
                }
            }
            case EMPTY, DEAD -> future.complete(ErrorResponses.join(memberId, Errors.UNKNOWN_MEMBER_ID));
        }
    }

    private JoinGroupResponseData joinResponse(ClassicGroup group, GroupMember member, boolean withMembers) {
        return new JoinGroupResponseData()
                .setMembers(withMembers ? group.currentMembersForLeader() : new ArrayList<>())
                .setMemberId(member.memberId())
                .setGenerationId(group.generationId())
                .setProtocolType(group.protocolType())
                .setProtocolName(group.protocolName())
                .setLeader(group.leaderId())
                .setSkipAssignment(false)
                .setErrorCode(Errors.NONE.code());
    }

    private void addMemberAndRebalance(ClassicGroup group, JoinRequest join, String memberId,
                                       CompletableFuture<JoinGroupResponseData> future, long nowMs) {
        GroupMember member = new GroupMember(memberId, join.groupInstanceId(), join.clientId(), join.clientHost(),
                join.protocolType(), join.rebalanceTimeoutMs(), join.sessionTimeoutMs(), join.protocols());
        member.setNew(true);
        if (group.isInState(GroupState.PREPARING_REBALANCE) && group.previousState() == GroupState.EMPTY) {
            group.setNewMemberAdded(true);
        }
        group.add(member);
        member.setAwaitingJoin(future);
        timer.cancel(pendingKey(group, memberId));
        // A new member's parked JoinGroup cannot heartbeat; bound it by the new-member timeout instead.
        scheduleHeartbeat(group, member, GroupConfig.NEW_MEMBER_JOIN_TIMEOUT_MS, nowMs);
        maybePrepareRebalanceOrCompleteJoin(group, nowMs);
    }

    private void updateMemberAndRebalance(ClassicGroup group, GroupMember member, JoinRequest join,
                                          CompletableFuture<JoinGroupResponseData> future, long nowMs) {
        if (member.isAwaitingJoin()) {
            member.completeJoin(ErrorResponses.join(member.memberId(), Errors.REBALANCE_IN_PROGRESS));
        }
        member.update(join.protocols(), join.rebalanceTimeoutMs(), join.sessionTimeoutMs());
        member.setAwaitingJoin(future);
        maybePrepareRebalanceOrCompleteJoin(group, nowMs);
    }

    /**
     * KIP-345: a static member rejoined with an unknown member id. The old member id is fenced and the
     * member continues under the new id; a Stable group whose protocol would not change keeps its
     * assignment without a rebalance.
     */
    private void updateStaticMemberAndRebalance(ClassicGroup group, JoinRequest join, String oldMemberId, String newMemberId,
                                                CompletableFuture<JoinGroupResponseData> future, long nowMs) {
        String instanceId = join.groupInstanceId();
        String currentLeader = group.leaderId();
        GroupMember member = group.member(oldMemberId);
        member.completeJoin(ErrorResponses.join(oldMemberId, Errors.FENCED_INSTANCE_ID));
        member.completeSync(ErrorResponses.sync(Errors.FENCED_INSTANCE_ID));
        timer.cancel(heartbeatKey(group, oldMemberId));
        List<GroupMember.Protocol> oldProtocols = member.protocols();
        int oldRebalanceTimeoutMs = member.rebalanceTimeoutMs();
        int oldSessionTimeoutMs = member.sessionTimeoutMs();
        group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
        member.update(join.protocols(), join.rebalanceTimeoutMs(), join.sessionTimeoutMs());
        scheduleHeartbeat(group, member, member.sessionTimeoutMs(), nowMs);
        switch (group.state()) {
            case STABLE -> {
                if (!group.selectProtocol().equals(group.protocolName())) {
                    member.setAwaitingJoin(future);
                    maybePrepareRebalanceOrCompleteJoin(group, nowMs);
                    return;
                }
                // Same protocol: persist the new member id and answer with the current generation. From v9
                // the leader learns it leads but skips the assignment; before v9 the old leader id is
                // returned so that a rejoining leader does not assign (a Stable group would not use it).
                boolean v9 = join.version() >= 9;
                boolean isLeader = group.isLeader(newMemberId);
                JoinGroupResponseData response = new JoinGroupResponseData()
                        .setMembers(v9 && isLeader ? group.currentMembersForLeader() : new ArrayList<>())
                        .setMemberId(newMemberId)
                        .setGenerationId(group.generationId())
                        .setProtocolType(group.protocolType())
                        .setProtocolName(group.protocolName())
                        .setLeader(v9 ? group.leaderId() : currentLeader)
                        .setSkipAssignment(v9 && isLeader);
                String groupId = group.groupId();
                append(groupId, List.of(CoordinatorRecords.groupMetadata(groupId, group.toGroupValue())), failure -> {
                    if (failure == null) {
                        future.complete(response);
                        return;
                    }
                    if (groups.get(groupId) == group && group.hasMember(newMemberId)) {
                        GroupMember m = group.member(newMemberId);
                        timer.cancel(heartbeatKey(group, newMemberId));
                        group.replaceStaticMember(instanceId, newMemberId, oldMemberId);
                        m.update(oldProtocols, oldRebalanceTimeoutMs, oldSessionTimeoutMs);
                        scheduleHeartbeat(group, m, m.sessionTimeoutMs(), nowMs());
                    }
                    future.complete(ErrorResponses.join("", ErrorResponses.appendFailure(failure, false)));
                });
            }
            case COMPLETING_REBALANCE -> {
                member.setAwaitingJoin(future);
                prepareRebalance(group, nowMs);
            }
            case PREPARING_REBALANCE -> {
                member.setAwaitingJoin(future);
                maybeCompleteJoinPhase(group, nowMs);
            }
            case EMPTY, DEAD -> future.complete(ErrorResponses.join(newMemberId, Errors.UNKNOWN_SERVER_ERROR));
        }
    }

    // ---------------------------------------------------------------- rebalance

    private void maybePrepareRebalanceOrCompleteJoin(ClassicGroup group, long nowMs) {
        switch (group.state()) {
            case STABLE, COMPLETING_REBALANCE, EMPTY -> prepareRebalance(group, nowMs);
            case PREPARING_REBALANCE -> maybeCompleteJoinPhase(group, nowMs);
            case DEAD -> {
            }
        }
    }

    /**
     * Enters PreparingRebalance. An Empty group waits {@code group.initial.rebalance.delay.ms} (longer
     * while new members keep arriving, bounded by the rebalance timeout); otherwise the join phase ends
     * when every member has rejoined or after the longest rebalance timeout.
     */
    private void prepareRebalance(ClassicGroup group, long nowMs) {
        if (group.isInState(GroupState.COMPLETING_REBALANCE)) {
            resetAndPropagateAssignmentWithError(group, Errors.REBALANCE_IN_PROGRESS, nowMs);
        }
        timer.cancel(syncKey(group));
        boolean initial = group.isInState(GroupState.EMPTY);
        log.info("Preparing to rebalance group {} in state {} with old generation {} ({} member(s))",
                group.groupId(), group.state(), group.generationId(), group.size());
        group.transitionTo(GroupState.PREPARING_REBALANCE, nowMs);
        if (initial) {
            int delayMs = config.groupInitialRebalanceDelayMs();
            int remainingMs = Math.max(group.rebalanceTimeoutMs() - delayMs, 0);
            group.setNewMemberAdded(false);
            scheduleInitialJoin(group, delayMs, remainingMs, nowMs);
        } else if (group.hasAllMembersJoined()) {
            completeJoin(group, nowMs);
        } else {
            scheduleJoinTimeout(group, nowMs);
        }
    }

    private void scheduleInitialJoin(ClassicGroup group, int delayMs, int remainingMs, long nowMs) {
        String groupId = group.groupId();
        timer.schedule(joinKey(group), nowMs + delayMs, t -> {
            if (groups.get(groupId) != group || !group.isInState(GroupState.PREPARING_REBALANCE)) {
                return;
            }
            if (group.newMemberAdded() && remainingMs != 0) {
                group.setNewMemberAdded(false);
                int nextDelayMs = Math.min(config.groupInitialRebalanceDelayMs(), remainingMs);
                int nextRemainingMs = Math.max(remainingMs - delayMs, 0);
                scheduleInitialJoin(group, nextDelayMs, nextRemainingMs, t);
            } else {
                completeJoin(group, t);
            }
        });
    }

    private void scheduleJoinTimeout(ClassicGroup group, long nowMs) {
        String groupId = group.groupId();
        timer.schedule(joinKey(group), nowMs + group.rebalanceTimeoutMs(), t -> {
            if (groups.get(groupId) == group) {
                completeJoin(group, t);
            }
        });
    }

    /** Ends the join phase early once everyone rejoined, except during the initial delay of an Empty group. */
    private void maybeCompleteJoinPhase(ClassicGroup group, long nowMs) {
        if (group.isInState(GroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()
                && group.previousState() != GroupState.EMPTY) {
            completeJoin(group, nowMs);
        }
    }

    /**
     * Ends the join phase: dynamic members that did not rejoin are removed, the next generation starts
     * and every parked JoinGroup is answered (the leader gets the member list).
     */
    private void completeJoin(ClassicGroup group, long nowMs) {
        timer.cancel(joinKey(group));
        if (!group.isInState(GroupState.PREPARING_REBALANCE)) {
            return;
        }
        for (GroupMember m : new ArrayList<>(group.members())) {
            if (!m.isAwaitingJoin() && !m.isStatic()) {
                timer.cancel(heartbeatKey(group, m.memberId()));
                m.completeSync(ErrorResponses.sync(Errors.UNKNOWN_MEMBER_ID));
                group.remove(m.memberId());
            }
        }
        if (!group.maybeElectNewJoinedLeader() && !group.hasNoMembers()) {
            // Only static members that have not rejoined remain: wait for them or their session expiry.
            log.info("Group {} could not complete rebalance because no members rejoined", group.groupId());
            scheduleJoinTimeout(group, nowMs);
            return;
        }
        group.initNextGeneration(nowMs);
        if (group.isInState(GroupState.EMPTY)) {
            String groupId = group.groupId();
            append(groupId, List.of(CoordinatorRecords.groupMetadata(groupId, group.toGroupValue())), failure -> {
                if (failure != null) {
                    log.warn("Failed to store empty metadata of group {} (generation {}): {}", groupId,
                            group.generationId(), failure.toString());
                }
            });
            return;
        }
        for (GroupMember m : group.members()) {
            m.completeJoin(joinResponse(group, m, group.isLeader(m.memberId())));
            scheduleHeartbeat(group, m, m.sessionTimeoutMs(), nowMs);
            m.setNew(false);
            group.pendingSyncMembers().add(m.memberId());
        }
        schedulePendingSync(group, nowMs);
    }

    /** Members that do not send SyncGroup within the rebalance timeout are removed. */
    private void schedulePendingSync(ClassicGroup group, long nowMs) {
        String groupId = group.groupId();
        int generation = group.generationId();
        timer.schedule(syncKey(group), nowMs + group.rebalanceTimeoutMs(), t -> {
            if (groups.get(groupId) != group || group.generationId() != generation) {
                return;
            }
            if ((group.isInState(GroupState.COMPLETING_REBALANCE) || group.isInState(GroupState.STABLE))
                    && !group.pendingSyncMembers().isEmpty()) {
                Set<String> laggards = new HashSet<>(group.pendingSyncMembers());
                log.info("Group {} removes members {} that did not sync within the rebalance timeout", groupId, laggards);
                for (String id : laggards) {
                    timer.cancel(heartbeatKey(group, id));
                    group.remove(id);
                }
                prepareRebalance(group, t);
            }
        });
    }

    private void resetAndPropagateAssignmentWithError(ClassicGroup group, Errors error, long nowMs) {
        for (GroupMember m : group.members()) {
            m.setAssignment(new byte[0]);
        }
        for (GroupMember m : group.members()) {
            if (m.completeSync(ErrorResponses.sync(error))) {
                scheduleHeartbeat(group, m, m.sessionTimeoutMs(), nowMs);
            }
        }
    }

    private void setAndPropagateAssignment(ClassicGroup group, Map<String, byte[]> assignment, long nowMs) {
        for (GroupMember m : group.members()) {
            m.setAssignment(assignment.get(m.memberId()));
        }
        for (GroupMember m : group.members()) {
            SyncGroupResponseData response = new SyncGroupResponseData()
                    .setProtocolType(group.protocolType())
                    .setProtocolName(group.protocolName())
                    .setAssignment(m.assignment())
                    .setErrorCode(Errors.NONE.code());
            if (m.completeSync(response)) {
                scheduleHeartbeat(group, m, m.sessionTimeoutMs(), nowMs);
            }
        }
    }

    // ---------------------------------------------------------------- session timeouts

    /** As in Kafka's classic protocol, an accepted offset commit also keeps the member's session alive. */
    void maintainSessionOnCommit(ClassicGroup group, String memberId, long nowMs) {
        if (group.isInState(GroupState.STABLE) || group.isInState(GroupState.PREPARING_REBALANCE)) {
            GroupMember member = group.member(memberId);
            if (member != null) {
                scheduleHeartbeat(group, member, member.sessionTimeoutMs(), nowMs);
            }
        }
    }

    private void scheduleHeartbeat(ClassicGroup group, GroupMember member, int timeoutMs, long nowMs) {
        String groupId = group.groupId();
        String memberId = member.memberId();
        timer.schedule(heartbeatKey(group, memberId), nowMs + timeoutMs, t -> onSessionExpired(groupId, group, memberId, t));
    }

    private void onSessionExpired(String groupId, ClassicGroup group, String memberId, long nowMs) {
        if (groups.get(groupId) != group) {
            return;
        }
        GroupMember member = group.member(memberId);
        if (member == null) {
            return;
        }
        if (member.hasSatisfiedHeartbeat()) {
            scheduleHeartbeat(group, member, member.sessionTimeoutMs(), nowMs);
            return;
        }
        log.info("Member {} of group {} has failed (session timeout), removing it", memberId, groupId);
        removeMemberAndUpdateGroup(group, member, nowMs);
    }

    /** Removes a member; a Stable or CompletingRebalance group rebalances, a rebalancing one may finish joining. */
    private void removeMemberAndUpdateGroup(ClassicGroup group, GroupMember member, long nowMs) {
        // A parked JoinGroup of a member timed out during the rebalance is answered so the client can retry.
        member.completeJoin(ErrorResponses.join("", Errors.UNKNOWN_MEMBER_ID));
        member.completeSync(ErrorResponses.sync(Errors.UNKNOWN_MEMBER_ID));
        timer.cancel(heartbeatKey(group, member.memberId()));
        group.remove(member.memberId());
        switch (group.state()) {
            case STABLE, COMPLETING_REBALANCE -> maybePrepareRebalanceOrCompleteJoin(group, nowMs);
            case PREPARING_REBALANCE -> maybeCompleteJoinPhase(group, nowMs);
            case EMPTY, DEAD -> {
            }
        }
    }

    private void removePendingMember(ClassicGroup group, String memberId, long nowMs) {
        group.removePendingMember(memberId);
        timer.cancel(pendingKey(group, memberId));
        if (group.isInState(GroupState.PREPARING_REBALANCE)) {
            maybeCompleteJoinPhase(group, nowMs);
        }
    }

    // ---------------------------------------------------------------- SyncGroup

    CompletableFuture<SyncGroupResponseData> syncGroup(SyncGroupRequestData req, short version, long nowMs) {
        CompletableFuture<SyncGroupResponseData> future = new CompletableFuture<>();
        String groupId = req.groupId();
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(ErrorResponses.sync(Errors.INVALID_GROUP_ID));
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return CompletableFuture.completedFuture(ErrorResponses.sync(Errors.UNKNOWN_MEMBER_ID));
        }
        String memberId = req.memberId();
        String instanceId = version >= 3 ? req.groupInstanceId() : null;
        Errors error;
        if (group.isInState(GroupState.DEAD)) {
            error = Errors.COORDINATOR_NOT_AVAILABLE;
        } else if ((error = group.validateMember(memberId, instanceId)) != Errors.NONE) {
            // error set
        } else if (req.generationId() != group.generationId()) {
            error = Errors.ILLEGAL_GENERATION;
        } else if (version >= 5 && (inconsistent(req.protocolType(), group.protocolType())
                || inconsistent(req.protocolName(), group.protocolName()))) {
            error = Errors.INCONSISTENT_GROUP_PROTOCOL;
        }
        if (error != Errors.NONE) {
            return CompletableFuture.completedFuture(ErrorResponses.sync(error));
        }
        GroupMember member = group.member(memberId);
        switch (group.state()) {
            case EMPTY -> future.complete(ErrorResponses.sync(Errors.UNKNOWN_MEMBER_ID));
            case PREPARING_REBALANCE -> future.complete(ErrorResponses.sync(Errors.REBALANCE_IN_PROGRESS));
            case COMPLETING_REBALANCE -> {
                if (member.isAwaitingSync()) {
                    member.completeSync(ErrorResponses.sync(Errors.REBALANCE_IN_PROGRESS));
                }
                member.setAwaitingSync(future);
                group.pendingSyncMembers().remove(memberId);
                if (group.isLeader(memberId)) {
                    storeLeaderAssignment(group, req, nowMs);
                }
            }
            case STABLE -> {
                group.pendingSyncMembers().remove(memberId);
                future.complete(new SyncGroupResponseData()
                        .setProtocolType(group.protocolType())
                        .setProtocolName(group.protocolName())
                        .setAssignment(member.assignment())
                        .setErrorCode(Errors.NONE.code()));
            }
            case DEAD -> future.complete(ErrorResponses.sync(Errors.COORDINATOR_NOT_AVAILABLE));
        }
        return future;
    }

    private static boolean inconsistent(String requested, String groupValue) {
        return requested != null && groupValue != null && !requested.equals(groupValue);
    }

    /** Persists the leader's assignment (members it left out get an empty one), then hands it out and goes Stable. */
    private void storeLeaderAssignment(ClassicGroup group, SyncGroupRequestData req, long nowMs) {
        Map<String, byte[]> assignment = new HashMap<>();
        for (SyncGroupRequestData.SyncGroupRequestAssignment a : req.assignments()) {
            assignment.put(a.memberId(), a.assignment());
        }
        for (GroupMember m : group.members()) {
            assignment.putIfAbsent(m.memberId(), new byte[0]);
        }
        String groupId = group.groupId();
        int generation = group.generationId();
        CoordinatorRecords.GroupValue value = group.toGroupValue();
        List<CoordinatorRecords.MemberValue> members = new ArrayList<>();
        for (CoordinatorRecords.MemberValue m : value.members()) {
            members.add(new CoordinatorRecords.MemberValue(m.memberId(), m.groupInstanceId(), m.clientId(), m.clientHost(),
                    m.rebalanceTimeoutMs(), m.sessionTimeoutMs(), m.subscription(), assignment.get(m.memberId())));
        }
        value = new CoordinatorRecords.GroupValue(value.protocolType(), value.generation(), value.protocolName(),
                value.leader(), nowMs, members);
        append(groupId, List.of(CoordinatorRecords.groupMetadata(groupId, value)), failure -> {
            if (groups.get(groupId) != group || !group.isInState(GroupState.COMPLETING_REBALANCE)
                    || group.generationId() != generation) {
                return;
            }
            long now = nowMs();
            if (failure != null) {
                resetAndPropagateAssignmentWithError(group, ErrorResponses.appendFailure(failure, false), now);
                maybePrepareRebalanceOrCompleteJoin(group, now);
            } else {
                setAndPropagateAssignment(group, assignment, now);
                group.transitionTo(GroupState.STABLE, now);
                log.info("Stabilized group {} generation {} with {} member(s)", groupId, generation, group.size());
            }
        });
    }

    // ---------------------------------------------------------------- Heartbeat

    HeartbeatResponseData heartbeat(HeartbeatRequestData req, short version, long nowMs) {
        String groupId = req.groupId();
        if (groupId == null || groupId.isEmpty()) {
            return ErrorResponses.heartbeat(Errors.INVALID_GROUP_ID);
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return ErrorResponses.heartbeat(Errors.UNKNOWN_MEMBER_ID);
        }
        if (group.isInState(GroupState.DEAD)) {
            return ErrorResponses.heartbeat(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        Errors error = group.validateMember(req.memberId(), version >= 3 ? req.groupInstanceId() : null);
        if (error != Errors.NONE) {
            return ErrorResponses.heartbeat(error);
        }
        if (req.generationId() != group.generationId()) {
            return ErrorResponses.heartbeat(Errors.ILLEGAL_GENERATION);
        }
        GroupMember member = group.member(req.memberId());
        return switch (group.state()) {
            case EMPTY, DEAD -> ErrorResponses.heartbeat(Errors.UNKNOWN_MEMBER_ID);
            case PREPARING_REBALANCE -> {
                scheduleHeartbeat(group, member, member.sessionTimeoutMs(), nowMs);
                yield ErrorResponses.heartbeat(Errors.REBALANCE_IN_PROGRESS);
            }
            case COMPLETING_REBALANCE, STABLE -> {
                scheduleHeartbeat(group, member, member.sessionTimeoutMs(), nowMs);
                yield ErrorResponses.heartbeat(Errors.NONE);
            }
        };
    }

    // ---------------------------------------------------------------- LeaveGroup

    LeaveGroupResponseData leaveGroup(LeaveGroupRequestData req, short version, long nowMs) {
        String groupId = req.groupId();
        if (groupId == null || groupId.isEmpty()) {
            return ErrorResponses.leave(Errors.INVALID_GROUP_ID);
        }
        List<LeaveGroupRequestData.MemberIdentity> leaving = ErrorResponses.leavingMembers(req, version);
        LeaveGroupResponseData resp = new LeaveGroupResponseData();
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            for (LeaveGroupRequestData.MemberIdentity id : leaving) {
                resp.members().add(memberResponse(id, Errors.UNKNOWN_MEMBER_ID));
            }
            return ErrorResponses.shapeLeave(resp, version);
        }
        if (group.isInState(GroupState.DEAD)) {
            return ErrorResponses.leave(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        List<String> toRemove = new ArrayList<>();
        for (LeaveGroupRequestData.MemberIdentity id : leaving) {
            String memberId = id.memberId() == null ? "" : id.memberId();
            String instanceId = id.groupInstanceId();
            Errors error;
            if (instanceId == null) {
                if (group.isPendingMember(memberId)) {
                    error = Errors.NONE;
                    removePendingMember(group, memberId, nowMs);
                } else if (!group.hasMember(memberId)) {
                    error = Errors.UNKNOWN_MEMBER_ID;
                } else {
                    error = Errors.NONE;
                    toRemove.add(memberId);
                }
            } else {
                String existing = group.staticMemberId(instanceId);
                if (existing == null) {
                    error = Errors.UNKNOWN_MEMBER_ID;
                } else if (!memberId.isEmpty() && !existing.equals(memberId)) {
                    error = Errors.FENCED_INSTANCE_ID;
                } else {
                    error = Errors.NONE;
                    toRemove.add(existing);
                }
            }
            resp.members().add(memberResponse(id, error));
        }
        for (String memberId : toRemove) {
            GroupMember m = group.member(memberId);
            if (m != null) {
                log.info("Member {} of group {} left", memberId, groupId);
                removeMemberAndUpdateGroup(group, m, nowMs);
            }
        }
        return ErrorResponses.shapeLeave(resp, version);
    }

    private static LeaveGroupResponseData.MemberResponse memberResponse(LeaveGroupRequestData.MemberIdentity id, Errors error) {
        return new LeaveGroupResponseData.MemberResponse()
                .setMemberId(id.memberId())
                .setGroupInstanceId(id.groupInstanceId())
                .setErrorCode(error.code());
    }

    // ---------------------------------------------------------------- load and shutdown

    /** After replay: members of restored groups must heartbeat within their session timeout. */
    void onLoaded(long nowMs) {
        onLoaded(groupId -> true, nowMs);
    }

    /** Restored members of the selected groups must heartbeat within their session timeout from now. */
    void onLoaded(Predicate<String> selected, long nowMs) {
        for (ClassicGroup g : groups.values()) {
            if (selected.test(g.groupId())) {
                for (GroupMember m : g.members()) {
                    scheduleHeartbeat(g, m, m.sessionTimeoutMs(), nowMs);
                }
            }
        }
    }

    /**
     * Forgets the selected groups (another broker coordinates them now): their parked JoinGroup and
     * SyncGroup requests answer NOT_COORDINATOR and their timers are cancelled. The stored state is
     * untouched; the next coordinator loads it.
     */
    int unload(Predicate<String> selected, long nowMs) {
        int n = 0;
        for (ClassicGroup g : new ArrayList<>(groups.values())) {
            if (selected.test(g.groupId())) {
                for (GroupMember m : g.members()) {
                    m.completeJoin(ErrorResponses.join(m.memberId(), Errors.NOT_COORDINATOR));
                    m.completeSync(ErrorResponses.sync(Errors.NOT_COORDINATOR));
                }
                removeGroup(g, nowMs);
                n++;
            }
        }
        return n;
    }

    /** Answers every parked JoinGroup and SyncGroup with NOT_COORDINATOR (the coordinator is going away). */
    void shutdown() {
        for (ClassicGroup g : groups.values()) {
            for (GroupMember m : g.members()) {
                m.completeJoin(ErrorResponses.join(m.memberId(), Errors.NOT_COORDINATOR));
                m.completeSync(ErrorResponses.sync(Errors.NOT_COORDINATOR));
            }
        }
    }

    // ---------------------------------------------------------------- timer keys

    static String heartbeatKey(ClassicGroup g, String memberId) {
        return "heartbeat\u0000" + g.groupId() + "\u0000" + memberId;
    }

    static String pendingKey(ClassicGroup g, String memberId) {
        return "pending\u0000" + g.groupId() + "\u0000" + memberId;
    }

    static String joinKey(ClassicGroup g) {
        return "join\u0000" + g.groupId();
    }

    static String syncKey(ClassicGroup g) {
        return "sync\u0000" + g.groupId();
    }
}
