package dev.skein.broker.controller.raft;

import org.apache.kafka.common.Uuid;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * The identity of a controller voter, as Kafka's KIP-853 voter key: the node id plus the directory
 * id of the voter's metadata log dir. The Ratis peer id is {@code <nodeId>-<directoryId>}, so a
 * voter that lost its metadata log (a new directory id) is a different Raft peer and can never be
 * mistaken for its old self, which may have voted or acknowledged entries it no longer holds.
 *
 * <p>The directory id is drawn at random when the metadata log dir is formatted (see
 * {@link VoterStorage}), so every incarnation of a voter has its own key. Peer ids of Skein before
 * voter keys were the bare node id: those parse with {@link #LEGACY_DIRECTORY_ID}.
 */
public record VoterKey(int nodeId, Uuid directoryId) {
    /** The directory id of a voter whose peer id is its bare node id (a quorum formed before voter keys). */
    public static final Uuid LEGACY_DIRECTORY_ID = Uuid.ZERO_UUID;

    public VoterKey {
        if (nodeId < 0) {
            throw new IllegalArgumentException("node id " + nodeId + " is negative");
        }
        if (directoryId == null) {
            throw new IllegalArgumentException("directory id of voter " + nodeId + " is null");
        }
    }

    /** A new incarnation of voter {@code nodeId}: a random directory id. */
    public static VoterKey newIncarnation(int nodeId) {
        Uuid id;
        do {
            id = Uuid.randomUuid();
        } while (id.equals(LEGACY_DIRECTORY_ID));
        return new VoterKey(nodeId, id);
    }

    public static VoterKey parse(String peerId) {
        int dash = peerId.indexOf('-');
        try {
            if (dash < 0) {
                return new VoterKey(Integer.parseInt(peerId), LEGACY_DIRECTORY_ID);
            }
            return new VoterKey(Integer.parseInt(peerId.substring(0, dash)), Uuid.fromString(peerId.substring(dash + 1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a controller voter peer id: '" + peerId + "'", e);
        }
    }

    public static VoterKey of(RaftPeerId peerId) {
        return parse(peerId.toString());
    }

    public boolean isLegacy() {
        return directoryId.equals(LEGACY_DIRECTORY_ID);
    }

    public RaftPeerId peerId() {
        return RaftPeerId.valueOf(toString());
    }

    @Override
    public String toString() {
        return isLegacy() ? Integer.toString(nodeId) : nodeId + "-" + directoryId;
    }
}
