package dev.skein.broker.controller.raft;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The identity of a controller voter (node id + directory id), its metadata log dir, and how it takes a place in the quorum. */
class VoterIdentityTest {
    private static final RaftGroupId GROUP = RaftGroupId.valueOf(UUID.fromString("5f0c6b0e-7c36-4a43-9d0e-3a1a0f6a2b11"));

    @TempDir
    Path dir;

    // ---- VoterKey ----

    @Test
    void peerIdIsNodeIdAndDirectoryIdAndParsesBack() {
        VoterKey key = VoterKey.newIncarnation(2);

        assertThat(key.peerId().toString()).isEqualTo("2-" + key.directoryId());
        assertThat(VoterKey.of(key.peerId())).isEqualTo(key);
        assertThat(key.isLegacy()).isFalse();
    }

    @Test
    void everyIncarnationOfANodeIsADifferentPeer() {
        VoterKey a = VoterKey.newIncarnation(1);
        VoterKey b = VoterKey.newIncarnation(1);

        assertThat(a.nodeId()).isEqualTo(b.nodeId());
        assertThat(a).isNotEqualTo(b);
        assertThat(a.peerId()).isNotEqualTo(b.peerId());
    }

    @Test
    void directoryIdsStartingWithADashStillParse() {
        VoterKey key = new VoterKey(7, Uuid.fromString("-AAAAAAAAAAAAAAAAAAAAQ"));

        assertThat(VoterKey.parse(key.toString())).isEqualTo(key);
    }

    @Test
    void bareNodeIdIsTheLegacyPeerOfAQuorumFormedBeforeVoterKeys() {
        VoterKey legacy = VoterKey.parse("3");

        assertThat(legacy).isEqualTo(new VoterKey(3, VoterKey.LEGACY_DIRECTORY_ID));
        assertThat(legacy.isLegacy()).isTrue();
        assertThat(legacy.peerId().toString()).isEqualTo("3");
    }

    @Test
    void peerIdsThatAreNotVoterKeysAreRejected() {
        assertThatThrownBy(() -> VoterKey.parse("voter-1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> VoterKey.parse("1-not-a-uuid")).isInstanceOf(IllegalArgumentException.class);
    }

    // ---- VoterStorage ----

    @Test
    void anEmptyDirIsFreshAndHasNoIdentityToRejoinAs() {
        VoterStorage storage = new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 1);

        assertThat(storage.isFresh()).isTrue();
        assertThatThrownBy(storage::identity).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void formattedIdentityIsTrustedOnlyTogetherWithItsRaftState() throws Exception {
        VoterStorage storage = new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 1);
        VoterKey key = VoterKey.newIncarnation(1);

        storage.format(key);
        // crashed before the Raft group was created: still fresh, the identity is not reused
        assertThat(storage.isFresh()).isTrue();

        Files.createDirectories(storage.groupDir());
        assertThat(storage.isFresh()).isFalse();
        assertThat(new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 1).identity()).isEqualTo(key);
        assertThatThrownBy(() -> storage.format(VoterKey.newIncarnation(1))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aWipedDirIsFreshAgainAndGetsANewKey() throws Exception {
        Path raft = dir.resolve("skein-raft");
        VoterStorage storage = new VoterStorage(raft, GROUP, "cluster-a", 1);
        VoterKey first = VoterKey.newIncarnation(1);
        storage.format(first);
        Files.createDirectories(storage.groupDir());

        try (var files = Files.walk(raft)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }

        assertThat(storage.isFresh()).isTrue();
        VoterKey second = VoterKey.newIncarnation(1);
        storage.format(second);
        Files.createDirectories(storage.groupDir());
        assertThat(storage.identity()).isEqualTo(second).isNotEqualTo(first);
    }

    @Test
    void aBootstrapIsRecordedBeforeTheGroupExistsAndSurvivesARestart() throws Exception {
        VoterStorage storage = new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 0);
        VoterKey key = VoterKey.newIncarnation(0);
        storage.format(key);
        assertThat(storage.isBootstrap()).isFalse();

        storage.markBootstrap();
        Files.createDirectories(storage.groupDir());

        VoterStorage reopened = new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 0);
        assertThat(reopened.isBootstrap()).isTrue();
        assertThat(reopened.identity()).isEqualTo(key);
    }

    @Test
    void raftStateWithoutIdentityIsALegacyVoterKnownByItsBareNodeId() throws Exception {
        VoterStorage storage = new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 2);
        Files.createDirectories(storage.groupDir());

        assertThat(storage.identity()).isEqualTo(new VoterKey(2, VoterKey.LEGACY_DIRECTORY_ID));
    }

    @Test
    void identityOfAnotherClusterOrNodeIsRefused() throws Exception {
        VoterStorage storage = new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 1);
        storage.format(VoterKey.newIncarnation(1));
        Files.createDirectories(storage.groupDir());

        assertThatThrownBy(() -> new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-b", 1).identity())
                .isInstanceOf(InconsistentClusterIdException.class).hasMessageContaining("cluster-b");
        assertThatThrownBy(() -> new VoterStorage(dir.resolve("skein-raft"), GROUP, "cluster-a", 2).identity())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("node.id is 2");
        assertThatThrownBy(() -> new VoterStorage(dir.resolve("x"), GROUP, "cluster-a", 1).format(VoterKey.newIncarnation(3)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---- QuorumJoin ----

    private static RaftPeer peer(VoterKey key, int port) {
        return RaftPeer.newBuilder().setId(key.peerId()).setAddress("127.0.0.1:" + port).build();
    }

    private static Map<Integer, QuorumJoin.PeerView> views(QuorumJoin.PeerView... views) {
        Map<Integer, QuorumJoin.PeerView> out = new LinkedHashMap<>();
        for (QuorumJoin.PeerView v : views) {
            out.put(v.nodeId(), v);
        }
        return out;
    }

    @Test
    void wipedVoterReplacesItsOldPeerInOneChangeAndNeverBecomesItAgain() {
        VoterKey old0 = VoterKey.newIncarnation(0);
        VoterKey v1 = VoterKey.newIncarnation(1);
        VoterKey v2 = VoterKey.newIncarnation(2);
        List<RaftPeer> conf = List.of(peer(old0, 9000), peer(v1, 9001), peer(v2, 9002));
        RaftPeer fresh0 = peer(VoterKey.newIncarnation(0), 9000);

        QuorumJoin.Decision d = QuorumJoin.decide(fresh0, false, 0, views(
                new QuorumJoin.PeerView.Member(1, conf, true, false, 40),
                new QuorumJoin.PeerView.Member(2, conf, true, true, 41)));

        assertThat(d).isInstanceOf(QuorumJoin.Decision.Join.class);
        QuorumJoin.Decision.Join join = (QuorumJoin.Decision.Join) d;
        assertThat(join.current()).isEqualTo(conf);
        assertThat(join.next()).containsExactlyInAnyOrder(peer(v1, 9001), peer(v2, 9002), fresh0);
        assertThat(join.next()).extracting(RaftPeer::getId).doesNotContain(old0.peerId());
    }

    @Test
    void theLeadersConfigurationCountsOverALaggingFollowers() {
        VoterKey v0 = VoterKey.newIncarnation(0);
        VoterKey v1 = VoterKey.newIncarnation(1);
        VoterKey old2 = VoterKey.newIncarnation(2);
        List<RaftPeer> stale = List.of(peer(v0, 9000), peer(v1, 9001));
        List<RaftPeer> current = List.of(peer(v0, 9000), peer(v1, 9001), peer(old2, 9002));
        RaftPeer fresh2 = peer(VoterKey.newIncarnation(2), 9002);

        QuorumJoin.Decision d = QuorumJoin.decide(fresh2, false, 0, views(
                new QuorumJoin.PeerView.Member(0, stale, true, false, 90),
                new QuorumJoin.PeerView.Member(1, current, true, true, 12)));

        assertThat(((QuorumJoin.Decision.Join) d).current()).isEqualTo(current);
    }

    @Test
    void aVoterAlreadyInTheConfigurationWaitsForTheLog() {
        VoterKey v0 = VoterKey.newIncarnation(0);
        RaftPeer self = peer(VoterKey.newIncarnation(1), 9001);
        List<RaftPeer> conf = List.of(peer(v0, 9000), self);

        assertThat(QuorumJoin.decide(self, true, 0, views(new QuorumJoin.PeerView.Member(0, conf, true, true, 5))))
                .isInstanceOf(QuorumJoin.Decision.Admitted.class);
    }

    @Test
    void noChangeIsRequestedWhileAnotherIsInProgress() {
        VoterKey v0 = VoterKey.newIncarnation(0);
        RaftPeer self = peer(VoterKey.newIncarnation(2), 9002);

        assertThat(QuorumJoin.decide(self, true, 0, views(
                new QuorumJoin.PeerView.Member(0, List.of(peer(v0, 9000)), false, true, 5),
                new QuorumJoin.PeerView.NoGroup(1))))
                .isInstanceOf(QuorumJoin.Decision.Wait.class);
    }

    @Test
    void lowestVoterBootstrapsOnlyWhenEveryVoterAnswersAndNoneHoldsMetadata() {
        RaftPeer v0 = peer(VoterKey.newIncarnation(0), 9000);
        RaftPeer v1 = peer(VoterKey.newIncarnation(1), 9001);

        assertThat(QuorumJoin.decide(v0, false, 0, views(new QuorumJoin.PeerView.NoGroup(1), new QuorumJoin.PeerView.NoGroup(2))))
                .isInstanceOf(QuorumJoin.Decision.Bootstrap.class);
        // a voter waiting to be admitted holds no metadata either
        assertThat(QuorumJoin.decide(v0, false, 0, views(new QuorumJoin.PeerView.NoGroup(1),
                new QuorumJoin.PeerView.Member(2, List.of(), true, false, -1))))
                .isInstanceOf(QuorumJoin.Decision.Bootstrap.class);
        assertThat(QuorumJoin.decide(v1, false, 0, views(new QuorumJoin.PeerView.NoGroup(0), new QuorumJoin.PeerView.NoGroup(2))))
                .isInstanceOf(QuorumJoin.Decision.Wait.class);
    }

    @Test
    void aVoterThatDoesNotAnswerMightHoldTheMetadataSoNobodyBootstraps() {
        RaftPeer v0 = peer(VoterKey.newIncarnation(0), 9000);

        QuorumJoin.Decision d = QuorumJoin.decide(v0, false, 0, views(new QuorumJoin.PeerView.NoGroup(1),
                new QuorumJoin.PeerView.Unreachable(2, "connection refused")));

        assertThat(d).isInstanceOf(QuorumJoin.Decision.Wait.class);
        assertThat(((QuorumJoin.Decision.Wait) d).reason()).contains("2");
    }

    @Test
    void aVoterWaitingToBeAdmittedNeverBootstraps() {
        RaftPeer v0 = peer(VoterKey.newIncarnation(0), 9000);

        assertThat(QuorumJoin.decide(v0, true, 0, views(new QuorumJoin.PeerView.NoGroup(1), new QuorumJoin.PeerView.NoGroup(2))))
                .isInstanceOf(QuorumJoin.Decision.Wait.class);
    }

    @Test
    void aFreshVoterJoiningALegacyQuorumReplacesTheBareNodeIdPeer() {
        List<RaftPeer> conf = List.of(peer(VoterKey.parse("0"), 9000), peer(VoterKey.parse("1"), 9001),
                peer(VoterKey.parse("2"), 9002));
        RaftPeer fresh1 = peer(VoterKey.newIncarnation(1), 9001);

        QuorumJoin.Decision d = QuorumJoin.decide(fresh1, false, 0, views(
                new QuorumJoin.PeerView.Member(0, conf, true, true, 100),
                new QuorumJoin.PeerView.Unreachable(2, "down")));

        assertThat(((QuorumJoin.Decision.Join) d).next()).extracting(p -> p.getId().toString())
                .containsExactlyInAnyOrder("0", "2", fresh1.getId().toString());
    }

    @Test
    void onlyServerToServerRequestsNameTheirTargetPeer() {
        var vote = org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto.newBuilder()
                .setServerRequest(org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto.newBuilder()
                        .setReplyId(VoterKey.parse("1").peerId().toByteString()))
                .build();
        var clientRequest = org.apache.ratis.proto.RaftProtos.RaftClientRequestProto.getDefaultInstance();

        assertThat(PeerIdGuard.target(vote)).isEqualTo(VoterKey.parse("1").peerId());
        assertThat(PeerIdGuard.target(clientRequest)).isNull();
        assertThat(PeerIdGuard.target("not a message")).isNull();
    }
}
