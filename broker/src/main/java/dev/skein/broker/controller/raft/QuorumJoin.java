package dev.skein.broker.controller.raft;

import org.apache.ratis.protocol.RaftPeer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a controller voter that is not (yet) a voter of its own configuration gets its place in the
 * quorum, decided from what the other voters of {@code controller.quorum.voters} answer and from
 * nothing else. Every voter has its own key ({@link VoterKey}); a fresh metadata log dir is always
 * a new key, so the decision is never "become my old self again".
 *
 * <ul>
 *   <li><b>Join.</b> If any voter holds metadata log entries, the quorum exists. The voter asks it
 *       for one configuration change that drops every peer of its node id (an old incarnation that
 *       lost its disk) and adds its own key: Ratis joint consensus, compare-and-set on the
 *       configuration read, so only one change runs at a time and the old majority keeps serving
 *       throughout. The leader catches the new voter up (log replay or snapshot install) before the
 *       change commits.</li>
 *   <li><b>Bootstrap.</b> If every other voter answers and none holds a log entry, no quorum has
 *       ever committed anything: the voter with the lowest node id starts the group with itself
 *       as the only voter (Kafka's {@code --standalone} format), and the others then join it one at
 *       a time. An entry committed before would be on a majority, so on some other voter's log,
 *       unless a majority lost their disks.</li>
 *   <li><b>Wait</b> otherwise (a voter unreachable and no quorum seen, or a change in progress):
 *       asking again later is always safe.</li>
 * </ul>
 */
public final class QuorumJoin {
    private QuorumJoin() {
    }

    /** What one other voter answered when asked about the quorum's group. */
    public sealed interface PeerView {
        int nodeId();

        /** No answer (not started, down, or partitioned away). */
        record Unreachable(int nodeId, String reason) implements PeerView {
        }

        /** Running, without Raft state of the quorum (fresh, not yet in a group). */
        record NoGroup(int nodeId) implements PeerView {
        }

        /**
         * Running a member of the group.
         *
         * @param peers     the voters of its current (during a change, its new) configuration
         * @param stable    whether no configuration change is in progress
         * @param leader    whether it is the leader
         * @param lastIndex the index of its last log entry or snapshot, -1 if it has neither
         */
        record Member(int nodeId, List<RaftPeer> peers, boolean stable, boolean leader, long lastIndex) implements PeerView {
            public Member {
                peers = List.copyOf(peers);
            }

            boolean hasEntries() {
                return lastIndex >= 0;
            }
        }
    }

    /** What a voter does next. */
    public sealed interface Decision {
        /** Start the group with this voter as its only voter. */
        record Bootstrap() implements Decision {
        }

        /** Ask the quorum to change its voters from {@code current} to {@code next}. */
        record Join(List<RaftPeer> current, List<RaftPeer> next) implements Decision {
            public Join {
                current = List.copyOf(current);
                next = List.copyOf(next);
            }
        }

        /** The quorum already lists this voter: wait until the log reaches it. */
        record Admitted() implements Decision {
        }

        record Wait(String reason) implements Decision {
        }
    }

    /**
     * @param self         this voter, at its address
     * @param hasGroup     whether this voter already runs the group (waiting to be admitted)
     * @param lowestVoter  the lowest node id of {@code controller.quorum.voters}
     * @param others       what every other voter answered
     */
    public static Decision decide(RaftPeer self, boolean hasGroup, int lowestVoter, Map<Integer, PeerView> others) {
        Optional<PeerView.Member> quorum = others.values().stream()
                .filter(v -> v instanceof PeerView.Member m && m.hasEntries())
                .map(v -> (PeerView.Member) v)
                .max(Comparator.comparing(PeerView.Member::leader).thenComparingLong(PeerView.Member::lastIndex));
        if (quorum.isPresent()) {
            return join(self, quorum.get());
        }
        List<String> missing = new ArrayList<>();
        for (PeerView v : others.values()) {
            if (v instanceof PeerView.Unreachable u) {
                missing.add(u.nodeId() + " (" + u.reason() + ")");
            }
        }
        if (!missing.isEmpty()) {
            return new Decision.Wait("no voter holds metadata and voters " + missing + " did not answer");
        }
        if (hasGroup) {
            return new Decision.Wait("waiting to be admitted, but no voter holds metadata");
        }
        if (VoterKey.of(self.getId()).nodeId() != lowestVoter) {
            return new Decision.Wait("no voter holds metadata yet; voter " + lowestVoter + " starts the quorum");
        }
        return new Decision.Bootstrap();
    }

    private static Decision join(RaftPeer self, PeerView.Member quorum) {
        if (quorum.peers().stream().anyMatch(p -> p.getId().equals(self.getId()))) {
            return new Decision.Admitted();
        }
        if (!quorum.stable()) {
            return new Decision.Wait("a configuration change is in progress");
        }
        int nodeId = VoterKey.of(self.getId()).nodeId();
        List<RaftPeer> next = new ArrayList<>();
        for (RaftPeer p : quorum.peers()) {
            if (VoterKey.of(p.getId()).nodeId() != nodeId) {
                next.add(p);
            }
        }
        next.add(self);
        return new Decision.Join(quorum.peers(), next);
    }
}
