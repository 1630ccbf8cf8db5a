package dev.skein.broker.controller.raft;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A request to the active controller, sent from any node through the Ratis client (a read-only
 * message, so Ratis routes it to the leader and it does not enter the log itself; the active
 * controller turns it into {@link dev.skein.broker.controller.MetadataCommand}s, which do).
 * Encoded as {@code version:u8(=1) type:u8 fields [requestId:uuid]}: a request that changes the
 * metadata carries the id of the call that made it, the same in every attempt to deliver it, and
 * the log entry it becomes carries it too ({@link dev.skein.broker.controller.AppliedRequests}).
 * The id is a trailing field, so a controller that predates it reads the request.
 */
sealed interface ControllerRequest {
    byte VERSION = 1;

    record CreateTopic(String name, int partitions, short replicationFactor, Map<String, String> configs,
                       boolean validateOnly) implements ControllerRequest {
    }

    record DeleteTopic(Uuid topicId) implements ControllerRequest {
    }

    record CreatePartitions(String topic, int newCount, boolean validateOnly) implements ControllerRequest {
    }

    /** A topic with its replicas per partition given (manual assignment). */
    record CreateTopicAssigned(String name, List<List<Integer>> assignment, Map<String, String> configs,
                               boolean validateOnly) implements ControllerRequest {
    }

    /** New partitions with their replicas given (manual assignment). */
    record CreatePartitionsAssigned(String topic, int newCount, List<List<Integer>> newAssignment, boolean validateOnly)
            implements ControllerRequest {
    }

    record AlterTopicConfigs(String topic, Map<String, String> configs, boolean validateOnly) implements ControllerRequest {
    }

    /** IncrementalAlterConfigs of a topic: {@code ops} are applied to the overrides the active controller holds. */
    record IncrementalAlterTopicConfigs(String topic, List<ConfigOp> ops, boolean validateOnly) implements ControllerRequest {
    }

    /** IncrementalAlterConfigs of a broker ({@code resource} = its id) or of the cluster default ({@code ""}). */
    record IncrementalAlterBrokerConfigs(String resource, List<ConfigOp> ops, boolean validateOnly)
            implements ControllerRequest {
    }

    record AllocateProducerIds(int size) implements ControllerRequest {
    }

    record RegisterBroker(ClusterImage.BrokerInfo broker) implements ControllerRequest {
    }

    record Heartbeat(int brokerId, long brokerEpoch, boolean wantShutdown) implements ControllerRequest {
    }

    record AlterPartition(TopicPartition partition, int leaderId, int leaderEpoch, int partitionEpoch,
                          List<Integer> newIsr) implements ControllerRequest {
    }

    /** Starts a reassignment of a partition, or cancels it ({@code target} null). */
    record AlterReassignment(TopicPartition partition, List<Integer> target) implements ControllerRequest {
    }

    record ElectLeader(byte electionType, TopicPartition partition) implements ControllerRequest {
    }

    record AlterBrokerConfigs(String resource, Map<String, String> configs, boolean validateOnly)
            implements ControllerRequest {
    }

    /** The quorum as the active controller sees it (voters with their directory ids), for a node that is not one. */
    record DescribeQuorum() implements ControllerRequest {
    }

    /**
     * A broker that is not a voter follows the metadata: the active controller answers with its
     * whole applied state once it is past {@code sinceIndex}, or with no state after {@code maxWaitMs}.
     */
    record FetchMetadata(long sinceIndex, int maxWaitMs) implements ControllerRequest {
    }

    /**
     * The index of the metadata log the active controller has applied, answered at once: a node that
     * waits until it has applied as much knows every change acknowledged before it asked ({@link ReadBarrier}).
     */
    record ReadIndex() implements ControllerRequest {
    }

    /** A request with the id of the call that made it (null for a request that changes nothing). */
    record Call(Uuid requestId, ControllerRequest request) {
    }

    static byte[] encode(ControllerRequest request) {
        return encode(null, request);
    }

    static byte[] encode(Uuid requestId, ControllerRequest request) {
        return MetadataCodec.write(out -> {
            out.writeByte(VERSION);
            switch (request) {
                case CreateTopic c -> {
                    out.writeByte(1);
                    out.writeUTF(c.name());
                    out.writeInt(c.partitions());
                    out.writeShort(c.replicationFactor());
                    writeConfigs(out, c.configs());
                    out.writeBoolean(c.validateOnly());
                }
                case DeleteTopic d -> {
                    out.writeByte(2);
                    out.writeLong(d.topicId().getMostSignificantBits());
                    out.writeLong(d.topicId().getLeastSignificantBits());
                }
                case CreatePartitions c -> {
                    out.writeByte(3);
                    out.writeUTF(c.topic());
                    out.writeInt(c.newCount());
                    out.writeBoolean(c.validateOnly());
                }
                case CreateTopicAssigned c -> {
                    out.writeByte(22);
                    out.writeUTF(c.name());
                    writeAssignment(out, c.assignment());
                    writeConfigs(out, c.configs());
                    out.writeBoolean(c.validateOnly());
                }
                case CreatePartitionsAssigned c -> {
                    out.writeByte(23);
                    out.writeUTF(c.topic());
                    out.writeInt(c.newCount());
                    writeAssignment(out, c.newAssignment());
                    out.writeBoolean(c.validateOnly());
                }
                case AlterTopicConfigs a -> {
                    out.writeByte(4);
                    out.writeUTF(a.topic());
                    writeConfigs(out, a.configs());
                    out.writeBoolean(a.validateOnly());
                }
                case AllocateProducerIds p -> {
                    out.writeByte(5);
                    out.writeInt(p.size());
                }
                case RegisterBroker r -> {
                    out.writeByte(6);
                    ClusterImage.BrokerInfo b = r.broker();
                    out.writeInt(b.id());
                    out.writeUTF(b.host());
                    out.writeInt(b.port());
                    out.writeBoolean(b.rack() != null);
                    if (b.rack() != null) {
                        out.writeUTF(b.rack());
                    }
                    out.writeLong(b.incarnation().getMostSignificantBits());
                    out.writeLong(b.incarnation().getLeastSignificantBits());
                }
                case Heartbeat h -> {
                    out.writeByte(7);
                    out.writeInt(h.brokerId());
                    out.writeLong(h.brokerEpoch());
                    out.writeBoolean(h.wantShutdown());
                }
                case AlterPartition a -> {
                    out.writeByte(8);
                    out.writeUTF(a.partition().topic());
                    out.writeInt(a.partition().partition());
                    out.writeInt(a.leaderId());
                    out.writeInt(a.leaderEpoch());
                    out.writeInt(a.partitionEpoch());
                    out.writeInt(a.newIsr().size());
                    for (int r : a.newIsr()) {
                        out.writeInt(r);
                    }
                }
                case AlterReassignment a -> {
                    out.writeByte(10);
                    out.writeUTF(a.partition().topic());
                    out.writeInt(a.partition().partition());
                    out.writeInt(a.target() == null ? -1 : a.target().size());
                    if (a.target() != null) {
                        for (int r : a.target()) {
                            out.writeInt(r);
                        }
                    }
                }
                case ElectLeader e -> {
                    out.writeByte(11);
                    out.writeByte(e.electionType());
                    out.writeUTF(e.partition().topic());
                    out.writeInt(e.partition().partition());
                }
                case AlterBrokerConfigs a -> {
                    out.writeByte(20);
                    out.writeUTF(a.resource());
                    writeConfigs(out, a.configs());
                    out.writeBoolean(a.validateOnly());
                }
                case FetchMetadata f -> {
                    out.writeByte(21);
                    out.writeLong(f.sinceIndex());
                    out.writeInt(f.maxWaitMs());
                }
                case IncrementalAlterTopicConfigs a -> {
                    out.writeByte(26);
                    out.writeUTF(a.topic());
                    writeOps(out, a.ops());
                    out.writeBoolean(a.validateOnly());
                }
                case IncrementalAlterBrokerConfigs a -> {
                    out.writeByte(27);
                    out.writeUTF(a.resource());
                    writeOps(out, a.ops());
                    out.writeBoolean(a.validateOnly());
                }
                case DescribeQuorum d -> out.writeByte(24);
                case ReadIndex r -> out.writeByte(25);
            }
            if (requestId != null) {
                out.writeLong(requestId.getMostSignificantBits());
                out.writeLong(requestId.getLeastSignificantBits());
            }
        });
    }

    static ControllerRequest decode(byte[] bytes) {
        return decodeCall(bytes).request();
    }

    static Call decodeCall(byte[] bytes) {
        return MetadataCodec.read(bytes, in -> {
            byte version = in.readByte();
            if (version != VERSION) {
                throw new IOException("Unsupported controller request version " + version);
            }
            byte type = in.readByte();
            ControllerRequest request = switch (type) {
                case 1 -> new CreateTopic(in.readUTF(), in.readInt(), in.readShort(), readConfigs(in), in.readBoolean());
                case 2 -> new DeleteTopic(new Uuid(in.readLong(), in.readLong()));
                case 3 -> new CreatePartitions(in.readUTF(), in.readInt(), in.readBoolean());
                case 4 -> new AlterTopicConfigs(in.readUTF(), readConfigs(in), in.readBoolean());
                case 5 -> new AllocateProducerIds(in.readInt());
                case 6 -> {
                    int id = in.readInt();
                    String host = in.readUTF();
                    int port = in.readInt();
                    String rack = in.readBoolean() ? in.readUTF() : null;
                    yield new RegisterBroker(new ClusterImage.BrokerInfo(id, host, port, rack,
                            new Uuid(in.readLong(), in.readLong()), true));
                }
                case 7 -> new Heartbeat(in.readInt(), in.readLong(), in.readBoolean());
                case 8 -> {
                    TopicPartition tp = new TopicPartition(in.readUTF(), in.readInt());
                    int leader = in.readInt();
                    int leaderEpoch = in.readInt();
                    int partitionEpoch = in.readInt();
                    int n = in.readInt();
                    List<Integer> isr = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        isr.add(in.readInt());
                    }
                    yield new AlterPartition(tp, leader, leaderEpoch, partitionEpoch, isr);
                }
                case 10 -> {
                    TopicPartition tp = new TopicPartition(in.readUTF(), in.readInt());
                    int n = in.readInt();
                    List<Integer> target = null;
                    if (n >= 0) {
                        target = new ArrayList<>(n);
                        for (int i = 0; i < n; i++) {
                            target.add(in.readInt());
                        }
                    }
                    yield new AlterReassignment(tp, target);
                }
                case 11 -> {
                    byte electionType = in.readByte();
                    yield new ElectLeader(electionType, new TopicPartition(in.readUTF(), in.readInt()));
                }
                case 20 -> new AlterBrokerConfigs(in.readUTF(), readConfigs(in), in.readBoolean());
                case 21 -> new FetchMetadata(in.readLong(), in.readInt());
                case 24 -> new DescribeQuorum();
                case 25 -> new ReadIndex();
                case 26 -> new IncrementalAlterTopicConfigs(in.readUTF(), readOps(in), in.readBoolean());
                case 27 -> new IncrementalAlterBrokerConfigs(in.readUTF(), readOps(in), in.readBoolean());
                case 22 -> new CreateTopicAssigned(in.readUTF(), readAssignment(in), readConfigs(in), in.readBoolean());
                case 23 -> new CreatePartitionsAssigned(in.readUTF(), in.readInt(), readAssignment(in), in.readBoolean());
                default -> throw new IOException("Unknown controller request type " + type);
            };
            Uuid requestId = in.available() > 0 ? new Uuid(in.readLong(), in.readLong()) : null;
            return new Call(requestId, request);
        });
    }

    private static void writeOps(DataOutputStream out, List<ConfigOp> ops) throws IOException {
        out.writeInt(ops.size());
        for (ConfigOp op : ops) {
            out.writeUTF(op.name());
            out.writeByte(op.kind().id);
            MetadataCodec.writeNullable(out, op.value());
            MetadataCodec.writeNullable(out, op.fallback());
        }
    }

    private static List<ConfigOp> readOps(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<ConfigOp> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ops.add(new ConfigOp(in.readUTF(), ConfigOp.Kind.of(in.readByte()), MetadataCodec.readNullable(in), MetadataCodec.readNullable(in)));
        }
        return ops;
    }

    private static void writeConfigs(DataOutputStream out, Map<String, String> configs) throws IOException {
        Map<String, String> sorted = new TreeMap<>(configs);
        out.writeInt(sorted.size());
        for (Map.Entry<String, String> e : sorted.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
    }

    private static Map<String, String> readConfigs(DataInputStream in) throws IOException {
        int n = in.readInt();
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            out.put(in.readUTF(), in.readUTF());
        }
        return out;
    }

    private static void writeAssignment(DataOutputStream out, List<List<Integer>> assignment) throws IOException {
        out.writeInt(assignment.size());
        for (List<Integer> replicas : assignment) {
            out.writeInt(replicas.size());
            for (int b : replicas) {
                out.writeInt(b);
            }
        }
    }

    private static List<List<Integer>> readAssignment(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<List<Integer>> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int size = in.readInt();
            List<Integer> replicas = new ArrayList<>(size);
            for (int j = 0; j < size; j++) {
                replicas.add(in.readInt());
            }
            out.add(List.copyOf(replicas));
        }
        return out;
    }
}
