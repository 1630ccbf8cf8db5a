package dev.skein.broker.coordinator;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.JoinGroupResponseData.JoinGroupResponseMember;
import org.apache.kafka.common.protocol.Errors;

import dev.skein.broker.coordinator.CoordinatorRecords.GroupValue;
import dev.skein.broker.coordinator.CoordinatorRecords.MemberValue;
import dev.skein.broker.coordinator.CoordinatorRecords.OffsetValue;

/**
 * A classic consumer group: its members, generation, selected protocol, leader and committed
 * offsets. {@link #transitionTo} is the only place its {@link GroupState} changes. Owned by the
 * coordinator thread; the rebalance logic lives in {@link GroupMetadataManager}.
 */
final class ClassicGroup {
    private final String groupId;
    private GroupState state;
    private GroupState previousState;
    private long currentStateTimestampMs;
    private int generationId;
    private String protocolType;
    private String protocolName;
    private String leaderId;
    private final Map<String, GroupMember> members = new LinkedHashMap<>();
    private final Map<String, String> staticMembers = new HashMap<>();
    private final Set<String> pendingJoinMembers = new HashSet<>();
    private final Set<String> pendingSyncMembers = new HashSet<>();
    private boolean newMemberAdded;
    /** Topics the members subscribe to, or null when unknown (not the consumer protocol or unparsable). */
    private Set<String> subscribedTopics = Set.of();
    private final Map<String, Map<Integer, OffsetValue>> offsets = new TreeMap<>();

    ClassicGroup(String groupId, GroupState initialState, long nowMs) {
        this.groupId = groupId;
        this.state = initialState;
        this.previousState = initialState;
        this.currentStateTimestampMs = nowMs;
    }

    String groupId() {
        return groupId;
    }

    GroupState state() {
        return state;
    }

    GroupState previousState() {
        return previousState;
    }

    boolean isInState(GroupState s) {
        return state == s;
    }

    long currentStateTimestampMs() {
        return currentStateTimestampMs;
    }

    /** Changes the state if {@link GroupState#validPreviousStates()} allows it; throws otherwise. */
    void transitionTo(GroupState target, long nowMs) {
        if (!target.validPreviousStates().contains(state)) {
            throw new IllegalStateException("Group " + groupId + " cannot go from " + state + " to " + target);
        }
        previousState = state;
        state = target;
        currentStateTimestampMs = nowMs;
    }

    int generationId() {
        return generationId;
    }

    String protocolType() {
        return protocolType;
    }

    String protocolName() {
        return protocolName;
    }

    String leaderId() {
        return leaderId;
    }

    boolean isLeader(String memberId) {
        return memberId.equals(leaderId);
    }

    boolean hasMember(String memberId) {
        return members.containsKey(memberId);
    }

    GroupMember member(String memberId) {
        return members.get(memberId);
    }

    Collection<GroupMember> members() {
        return members.values();
    }

    int size() {
        return members.size();
    }

    boolean hasNoMembers() {
        return members.isEmpty();
    }

    /** The member id currently holding a static instance id, or null. */
    String staticMemberId(String groupInstanceId) {
        return groupInstanceId == null ? null : staticMembers.get(groupInstanceId);
    }

    boolean isPendingMember(String memberId) {
        return pendingJoinMembers.contains(memberId);
    }

    void addPendingMember(String memberId) {
        pendingJoinMembers.add(memberId);
    }

    boolean removePendingMember(String memberId) {
        return pendingJoinMembers.remove(memberId);
    }

    Set<String> pendingJoinMembers() {
        return pendingJoinMembers;
    }

    /**
     * Checks that a request comes from a current member: with an instance id, that the instance is
     * known (UNKNOWN_MEMBER_ID) and held by this member id (FENCED_INSTANCE_ID); without, that the
     * member id is known (UNKNOWN_MEMBER_ID).
     */
    Errors validateMember(String memberId, String groupInstanceId) {
        if (groupInstanceId != null) {
            String existing = staticMembers.get(groupInstanceId);
            if (existing == null) {
                return Errors.UNKNOWN_MEMBER_ID;
            }
            return existing.equals(memberId) ? Errors.NONE
                    : Errors.FENCED_INSTANCE_ID;
        }
        return members.containsKey(memberId) ? Errors.NONE
                : Errors.UNKNOWN_MEMBER_ID;
    }

    Set<String> pendingSyncMembers() {
        return pendingSyncMembers;
    }

    boolean newMemberAdded() {
        return newMemberAdded;
    }

    void setNewMemberAdded(boolean value) {
        newMemberAdded = value;
    }

    int numAwaitingJoin() {
        int n = 0;
        for (GroupMember m : members.values()) {
            if (m.isAwaitingJoin()) {
                n++;
            }
        }
        return n;
    }

    boolean hasAllMembersJoined() {
        return numAwaitingJoin() == members.size() && pendingJoinMembers.isEmpty();
    }

    /** The longest rebalance timeout of the members (bounds the join phase). */
    int rebalanceTimeoutMs() {
        int max = 0;
        for (GroupMember m : members.values()) {
            max = Math.max(max, m.rebalanceTimeoutMs());
        }
        return max;
    }

    void add(GroupMember member) {
        if (members.isEmpty()) {
            protocolType = member.protocolType();
        }
        members.put(member.memberId(), member);
        if (member.isStatic()) {
            staticMembers.put(member.groupInstanceId(), member.memberId());
        }
        if (leaderId == null) {
            leaderId = member.memberId();
        }
        pendingJoinMembers.remove(member.memberId());
    }

    /** Removes a member (its parked responses must have been completed by the caller). */
    GroupMember remove(String memberId) {
        GroupMember m = members.remove(memberId);
        pendingSyncMembers.remove(memberId);
        if (m != null && m.isStatic() && memberId.equals(staticMembers.get(m.groupInstanceId()))) {
            staticMembers.remove(m.groupInstanceId());
        }
        if (memberId.equals(leaderId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
        return m;
    }

    /** Moves a static member to a new member id, keeping its assignment and leadership. */
    GroupMember replaceStaticMember(String groupInstanceId, String oldMemberId, String newMemberId) {
        GroupMember m = members.remove(oldMemberId);
        if (m == null) {
            throw new IllegalStateException("No member " + oldMemberId + " for instance " + groupInstanceId);
        }
        m.setMemberId(newMemberId);
        members.put(newMemberId, m);
        staticMembers.put(groupInstanceId, newMemberId);
        if (oldMemberId.equals(leaderId)) {
            leaderId = newMemberId;
        }
        if (pendingSyncMembers.remove(oldMemberId)) {
            pendingSyncMembers.add(newMemberId);
        }
        return m;
    }

    /** If the leader has not rejoined, hands leadership to a member that has; false if none has. */
    boolean maybeElectNewJoinedLeader() {
        if (leaderId == null) {
            return false;
        }
        GroupMember leader = members.get(leaderId);
        if (leader != null && leader.isAwaitingJoin()) {
            return true;
        }
        for (GroupMember m : members.values()) {
            if (m.isAwaitingJoin()) {
                leaderId = m.memberId();
                return true;
            }
        }
        return false;
    }

    /** Protocols every member supports, in the first member's order. */
    Set<String> candidateProtocols() {
        Set<String> candidates = null;
        for (GroupMember m : members.values()) {
            Set<String> names = new LinkedHashSet<>();
            m.protocols().forEach(p -> names.add(p.name()));
            if (candidates == null) {
                candidates = names;
            } else {
                candidates.retainAll(names);
            }
        }
        return candidates == null ? Set.of() : candidates;
    }

    /**
     * Whether a member with this protocol type and protocols may join: an empty group accepts any
     * non-empty type and list; otherwise the type must match and one protocol must be supported by
     * every current member.
     */
    boolean supportsProtocols(String memberProtocolType, List<GroupMember.Protocol> memberProtocols) {
        if (members.isEmpty()) {
            return memberProtocolType != null && !memberProtocolType.isEmpty() && !memberProtocols.isEmpty();
        }
        if (!memberProtocolType.equals(protocolType)) {
            return false;
        }
        Set<String> candidates = candidateProtocols();
        for (GroupMember.Protocol p : memberProtocols) {
            if (candidates.contains(p.name())) {
                return true;
            }
        }
        return false;
    }

    /** The protocol supported by every member that most members prefer (ties: first member's order). */
    String selectProtocol() {
        Set<String> candidates = candidateProtocols();
        if (candidates.isEmpty()) {
            throw new IllegalStateException("No protocol supported by all members of " + groupId);
        }
        Map<String, Integer> votes = new LinkedHashMap<>();
        candidates.forEach(c -> votes.put(c, 0));
        for (GroupMember m : members.values()) {
            votes.merge(m.vote(candidates), 1, Integer::sum);
        }
        String best = null;
        int bestVotes = -1;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (e.getValue() > bestVotes) {
                best = e.getKey();
                bestVotes = e.getValue();
            }
        }
        return best;
    }

    /** Starts the next generation: CompletingRebalance with the chosen protocol, or Empty without members. */
    void initNextGeneration(long nowMs) {
        generationId++;
        if (!members.isEmpty()) {
            protocolName = selectProtocol();
            subscribedTopics = computeSubscribedTopics();
            transitionTo(GroupState.COMPLETING_REBALANCE, nowMs);
        } else {
            protocolName = null;
            subscribedTopics = Set.of();
            transitionTo(GroupState.EMPTY, nowMs);
        }
        pendingSyncMembers.clear();
    }

    /** The join response's member list for the leader: every member's metadata for the chosen protocol. */
    List<JoinGroupResponseMember> currentMembersForLeader() {
        List<JoinGroupResponseMember> out = new ArrayList<>(members.size());
        for (GroupMember m : members.values()) {
            out.add(new JoinGroupResponseMember()
                    .setMemberId(m.memberId())
                    .setGroupInstanceId(m.groupInstanceId())
                    .setMetadata(m.metadata(protocolName)));
        }
        return out;
    }

    boolean usesConsumerProtocol() {
        return ConsumerProtocol.PROTOCOL_TYPE.equals(protocolType);
    }

    /** Whether an active member subscribes to the topic; unknown subscriptions count as subscribed. */
    boolean isSubscribedToTopic(String topic) {
        return subscribedTopics == null || subscribedTopics.contains(topic);
    }

    boolean subscriptionsKnown() {
        return subscribedTopics != null;
    }

    private Set<String> computeSubscribedTopics() {
        if (members.isEmpty()) {
            return Set.of();
        }
        if (!usesConsumerProtocol() || protocolName == null) {
            return null;
        }
        Set<String> topics = new HashSet<>();
        try {
            for (GroupMember m : members.values()) {
                byte[] metadata = m.metadata(protocolName);
                topics.addAll(ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata)).topics());
            }
        } catch (RuntimeException e) {
            return null;
        }
        return topics;
    }

    Map<String, Map<Integer, OffsetValue>> offsets() {
        return offsets;
    }

    OffsetValue offset(String topic, int partition) {
        Map<Integer, OffsetValue> p = offsets.get(topic);
        return p == null ? null : p.get(partition);
    }

    void putOffset(String topic, int partition, OffsetValue value) {
        offsets.computeIfAbsent(topic, t -> new TreeMap<>()).put(partition, value);
    }

    boolean removeOffset(String topic, int partition) {
        Map<Integer, OffsetValue> p = offsets.get(topic);
        if (p == null || p.remove(partition) == null) {
            return false;
        }
        if (p.isEmpty()) {
            offsets.remove(topic);
        }
        return true;
    }

    boolean hasOffsets() {
        return !offsets.isEmpty();
    }

    /** The group as persisted in its metadata record. */
    GroupValue toGroupValue() {
        List<MemberValue> out = new ArrayList<>(members.size());
        for (GroupMember m : members.values()) {
            out.add(new MemberValue(m.memberId(), m.groupInstanceId(), m.clientId(), m.clientHost(),
                    m.rebalanceTimeoutMs(), m.sessionTimeoutMs(),
                    protocolName == null ? null : m.metadata(protocolName), m.assignment()));
        }
        return new GroupValue(protocolType, generationId, protocolName, leaderId, currentStateTimestampMs, out);
    }

    /** Restores a group from its metadata record: Stable with its members, or Empty without. */
    static ClassicGroup restore(String groupId, GroupValue v) {
        GroupState s = v.members().isEmpty() ? GroupState.EMPTY : GroupState.STABLE;
        ClassicGroup g = new ClassicGroup(groupId, s, v.currentStateTimestampMs());
        g.generationId = v.generation();
        g.protocolType = v.protocolType();
        g.protocolName = v.protocolName();
        for (MemberValue mv : v.members()) {
            List<GroupMember.Protocol> protocols = v.protocolName() == null ? List.of()
                    : List.of(new GroupMember.Protocol(v.protocolName(), mv.subscription() == null ? new byte[0] : mv.subscription()));
            GroupMember m = new GroupMember(mv.memberId(), mv.groupInstanceId(), mv.clientId(), mv.clientHost(),
                    v.protocolType(), mv.rebalanceTimeoutMs(), mv.sessionTimeoutMs(), protocols);
            m.setAssignment(mv.assignment());
            g.members.put(m.memberId(), m);
            if (m.isStatic()) {
                g.staticMembers.put(m.groupInstanceId(), m.memberId());
            }
        }
        g.leaderId = v.leader() != null && g.members.containsKey(v.leader()) ? v.leader()
                : (g.members.isEmpty() ? null : g.members.keySet().iterator().next());
        g.subscribedTopics = g.computeSubscribedTopics();
        return g;
    }

    /** Copies the committed offsets of a group replaced by a newer metadata record. */
    void adoptOffsets(ClassicGroup previous) {
        previous.offsets.forEach((t, parts) -> parts.forEach((p, v) -> putOffset(t, p, v)));
    }
}
