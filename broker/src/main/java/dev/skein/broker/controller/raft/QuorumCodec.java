package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.controller.QuorumDescription;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.List;

/** The binary form of a {@link QuorumDescription} in a controller reply (a DescribeQuorum asked by a non-voter). */
final class QuorumCodec {
    private QuorumCodec() {
    }

    static byte[] encode(QuorumDescription q) {
        return MetadataCodec.write(out -> {
            out.writeInt(q.leaderId());
            out.writeLong(q.leaderEpoch());
            out.writeLong(q.highWatermark());
            out.writeInt(q.voters().size());
            for (QuorumDescription.Voter v : q.voters()) {
                out.writeInt(v.nodeId());
                out.writeLong(v.directoryId().getMostSignificantBits());
                out.writeLong(v.directoryId().getLeastSignificantBits());
                out.writeLong(v.logEndOffset());
            }
        });
    }

    static QuorumDescription decode(byte[] bytes) {
        return MetadataCodec.read(bytes, in -> {
            int leader = in.readInt();
            long epoch = in.readLong();
            long highWatermark = in.readLong();
            int n = in.readInt();
            List<QuorumDescription.Voter> voters = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                voters.add(new QuorumDescription.Voter(in.readInt(), new Uuid(in.readLong(), in.readLong()), in.readLong()));
            }
            return new QuorumDescription(leader, epoch, highWatermark, voters);
        });
    }
}
