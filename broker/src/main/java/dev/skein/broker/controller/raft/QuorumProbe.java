package dev.skein.broker.controller.raft;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.LogInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.ProtoUtils;
import org.apache.ratis.util.TimeDuration;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Asks controller voters, by the addresses of {@code controller.quorum.voters}, what they know of
 * the quorum's Raft group (Ratis's group-info admin call). The peer ids of the others are not
 * known in advance (they carry directory ids), and Ratis routes an admin call by address only, so
 * each voter is addressed under a placeholder id. Also the way tests and tools read the voters.
 */
public final class QuorumProbe implements Closeable {
    private final RaftGroupId groupId;
    private final Map<Integer, RaftPeerId> placeholders = new LinkedHashMap<>();
    private final RaftClient client;

    public QuorumProbe(RaftGroupId groupId, List<QuorumVoter> voters, long timeoutMs) {
        this.groupId = groupId;
        List<RaftPeer> peers = new ArrayList<>();
        for (QuorumVoter v : voters) {
            RaftPeerId id = RaftPeerId.valueOf("probe-" + v.id());
            placeholders.put(v.id(), id);
            peers.add(RaftPeer.newBuilder().setId(id).setAddress(v.address()).build());
        }
        RaftProperties p = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(timeoutMs, TimeUnit.MILLISECONDS));
        this.client = RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(RaftGroup.valueOf(groupId, peers))
                .setProperties(p)
                .setRetryPolicy(RetryPolicies.noRetry())
                .build();
    }

    /** The quorum's group as one voter sees it. */
    public static QuorumProbe forGroupOf(String clusterId, List<QuorumVoter> voters, long timeoutMs) {
        return new QuorumProbe(RaftController.groupId(clusterId), voters, timeoutMs);
    }

    /** Asks every voter but {@code except} (-1 for none); unanswered voters are {@link QuorumJoin.PeerView.Unreachable}. */
    public Map<Integer, QuorumJoin.PeerView> probeAll(int except) {
        Map<Integer, QuorumJoin.PeerView> out = new LinkedHashMap<>();
        for (int id : placeholders.keySet()) {
            if (id != except) {
                out.put(id, probe(id));
            }
        }
        return out;
    }

    public QuorumJoin.PeerView probe(int nodeId) {
        try {
            // list first: asking a voter for a group it does not have logs a warning there
            var api = client.getGroupManagementApi(placeholders.get(nodeId));
            if (!api.list().getGroupIds().contains(groupId)) {
                return new QuorumJoin.PeerView.NoGroup(nodeId);
            }
            GroupInfoReply reply = api.info(groupId);
            RaftConfigurationProto conf = reply.getConf().orElse(null);
            List<RaftPeer> peers = conf == null ? reply.getGroup().getPeers().stream().toList()
                    : ProtoUtils.toRaftPeers(conf.getPeersList());
            boolean stable = conf == null || conf.getOldPeersList().isEmpty();
            LogInfoProto logInfo = reply.getLogInfoProto();
            long last = -1;
            if (logInfo != null && logInfo.hasLastEntry()) {
                last = logInfo.getLastEntry().getIndex();
            }
            if (logInfo != null && logInfo.hasLastSnapshot()) {
                last = Math.max(last, logInfo.getLastSnapshot().getIndex());
            }
            boolean leader = reply.getRoleInfoProto() != null && reply.getRoleInfoProto().getRole() == RaftPeerRole.LEADER;
            return new QuorumJoin.PeerView.Member(nodeId, peers, stable, leader, last);
        } catch (IOException | RuntimeException e) {
            if (isGroupMismatch(e)) {
                return new QuorumJoin.PeerView.NoGroup(nodeId);
            }
            return new QuorumJoin.PeerView.Unreachable(nodeId, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static boolean isGroupMismatch(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            // the group-info call of Ratis 3.2 does not unwrap the server's exception from the gRPC status
            if (t instanceof GroupMismatchException
                    || (t.getMessage() != null && t.getMessage().contains(GroupMismatchException.class.getSimpleName()))) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
