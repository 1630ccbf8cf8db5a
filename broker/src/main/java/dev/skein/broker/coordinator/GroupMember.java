package dev.skein.broker.coordinator;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;

/**
 * A member of a classic group, with the JoinGroup/SyncGroup responses it is waiting for. Owned by the
 * coordinator thread.
 */
final class GroupMember {
    /** One protocol the member supports, in the member's order of preference. */
    record Protocol(String name, byte[] metadata) {
    }

    private String memberId;
    private final String groupInstanceId;
    private final String clientId;
    private final String clientHost;
    private final String protocolType;
    private int rebalanceTimeoutMs;
    private int sessionTimeoutMs;
    private List<Protocol> protocols;
    private byte[] assignment = new byte[0];
    private CompletableFuture<JoinGroupResponseData> awaitingJoin;
    private CompletableFuture<SyncGroupResponseData> awaitingSync;
    private boolean isNew;

    GroupMember(String memberId, String groupInstanceId, String clientId, String clientHost, String protocolType,
                int rebalanceTimeoutMs, int sessionTimeoutMs, List<Protocol> protocols) {
        this.memberId = memberId;
        this.groupInstanceId = groupInstanceId;
        this.clientId = clientId;
        this.clientHost = clientHost;
        this.protocolType = protocolType;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.protocols = List.copyOf(protocols);
    }

    String memberId() {
        return memberId;
    }

    void setMemberId(String memberId) {
        this.memberId = memberId;
    }

    String groupInstanceId() {
        return groupInstanceId;
    }

    boolean isStatic() {
        return groupInstanceId != null;
    }

    String clientId() {
        return clientId;
    }

    String clientHost() {
        return clientHost;
    }

    String protocolType() {
        return protocolType;
    }

    int rebalanceTimeoutMs() {
        return rebalanceTimeoutMs;
    }

    int sessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    List<Protocol> protocols() {
        return protocols;
    }

    void update(List<Protocol> protocols, int rebalanceTimeoutMs, int sessionTimeoutMs) {
        this.protocols = List.copyOf(protocols);
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
    }

    /** The member's metadata for a protocol, or null if it does not support it. */
    byte[] metadata(String protocolName) {
        for (Protocol p : protocols) {
            if (p.name().equals(protocolName)) {
                return p.metadata();
            }
        }
        return null;
    }

    boolean supports(String protocolName) {
        return metadata(protocolName) != null;
    }

    /** True if the member sent exactly these protocols (names, order and metadata). */
    boolean matches(List<Protocol> other) {
        if (other.size() != protocols.size()) {
            return false;
        }
        for (int i = 0; i < other.size(); i++) {
            Protocol a = protocols.get(i);
            Protocol b = other.get(i);
            if (!Objects.equals(a.name(), b.name()) || !java.util.Arrays.equals(a.metadata(), b.metadata())) {
                return false;
            }
        }
        return true;
    }

    /** The member's most preferred protocol among the candidates. */
    String vote(java.util.Set<String> candidates) {
        for (Protocol p : protocols) {
            if (candidates.contains(p.name())) {
                return p.name();
            }
        }
        throw new IllegalStateException("Member " + memberId + " supports none of " + candidates);
    }

    byte[] assignment() {
        return assignment;
    }

    void setAssignment(byte[] assignment) {
        this.assignment = assignment == null ? new byte[0] : assignment;
    }

    CompletableFuture<JoinGroupResponseData> awaitingJoin() {
        return awaitingJoin;
    }

    boolean isAwaitingJoin() {
        return awaitingJoin != null;
    }

    void setAwaitingJoin(CompletableFuture<JoinGroupResponseData> future) {
        this.awaitingJoin = future;
    }

    CompletableFuture<SyncGroupResponseData> awaitingSync() {
        return awaitingSync;
    }

    boolean isAwaitingSync() {
        return awaitingSync != null;
    }

    void setAwaitingSync(CompletableFuture<SyncGroupResponseData> future) {
        this.awaitingSync = future;
    }

    /** Completes and clears the parked JoinGroup, if any. */
    boolean completeJoin(JoinGroupResponseData response) {
        CompletableFuture<JoinGroupResponseData> f = awaitingJoin;
        awaitingJoin = null;
        return f != null && f.complete(response);
    }

    /** Completes and clears the parked SyncGroup, if any. */
    boolean completeSync(SyncGroupResponseData response) {
        CompletableFuture<SyncGroupResponseData> f = awaitingSync;
        awaitingSync = null;
        return f != null && f.complete(response);
    }

    boolean isNew() {
        return isNew;
    }

    void setNew(boolean isNew) {
        this.isNew = isNew;
    }

    /**
     * Whether an expired session timer may be ignored: members parked in a rebalance satisfy their
     * heartbeat, except new members, whose parked JoinGroup is bounded by the new-member timeout.
     */
    boolean hasSatisfiedHeartbeat() {
        if (isNew) {
            return false;
        }
        return isAwaitingJoin() || isAwaitingSync();
    }
}
