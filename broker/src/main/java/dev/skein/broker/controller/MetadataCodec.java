package dev.skein.broker.controller;

import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.Uuid;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The binary form of metadata commands (one Raft log entry is a batch of them) and of the whole
 * {@link MetadataState} (a snapshot). Both start with a format version byte; a reader rejects a
 * version it does not know rather than guess. Strings are {@link DataOutput#writeUTF modified
 * UTF-8}, lists and maps are length-prefixed, a nullable string is a presence flag then the string.
 *
 * <pre>
 * batch    := version:u8(=1) count:i32 command* [requestId:uuid]
 * command  := type:u8 fields (see {@link #writeCommand})
 * state    := version:u8(=1) nextProducerId:i64 brokers:i32 broker* topics:i32 topic* [brokerConfigs:i32 (resource:utf configs)*]
 * snapshot := state [requests:i32 (requestId:uuid error:i16 message:nullable-utf value:i64 index:i64)*]
 * </pre>
 *
 * Trailing sections are optional, so entries and snapshots written before them still read, and a
 * reader that predates one ignores it.
 */
public final class MetadataCodec {
    private static final byte VERSION = 1;

    private static final byte REGISTER_BROKER = 1;
    private static final byte UNFENCE_BROKER = 2;
    private static final byte FENCE_BROKER = 3;
    private static final byte CREATE_TOPIC = 4;
    private static final byte DELETE_TOPIC = 5;
    private static final byte CREATE_PARTITIONS = 6;
    private static final byte ALTER_TOPIC_CONFIGS = 7;
    private static final byte CHANGE_PARTITION = 8;
    private static final byte PRODUCER_ID_BLOCK = 9;
    private static final byte REASSIGN_PARTITION = 10;
    private static final byte ALTER_BROKER_CONFIGS = 20;

    private MetadataCodec() {
    }

    public static byte[] encodeBatch(List<MetadataCommand> commands) {
        return encodeEntry(new MetadataEntry(null, commands));
    }

    public static List<MetadataCommand> decodeBatch(byte[] bytes) {
        return decodeEntry(bytes).commands();
    }

    /** A log entry: its commands, then its request id if it has one. */
    public static byte[] encodeEntry(MetadataEntry entry) {
        return write(out -> {
            out.writeByte(VERSION);
            out.writeInt(entry.commands().size());
            for (MetadataCommand c : entry.commands()) {
                writeCommand(out, c);
            }
            if (entry.requestId() != null) {
                writeUuid(out, entry.requestId());
            }
        });
    }

    public static MetadataEntry decodeEntry(byte[] bytes) {
        return read(bytes, in -> {
            checkVersion(in.readByte());
            int n = in.readInt();
            List<MetadataCommand> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(readCommand(in));
            }
            Uuid requestId = in.available() > 0 ? readUuid(in) : null;
            return new MetadataEntry(requestId, out);
        });
    }

    /** The replicated state of a controller as a snapshot holds it: the metadata, then the outcomes of the last requests. */
    public record Snapshot(MetadataState state, AppliedRequests requests) {
    }

    public static byte[] encodeSnapshot(MetadataState state, AppliedRequests requests) {
        return write(out -> {
            writeState(out, state);
            List<Map.Entry<Uuid, AppliedRequests.Outcome>> entries = requests.entries();
            out.writeInt(entries.size());
            for (Map.Entry<Uuid, AppliedRequests.Outcome> e : entries) {
                writeUuid(out, e.getKey());
                AppliedRequests.Outcome o = e.getValue();
                out.writeShort(o.errorCode());
                writeNullable(out, o.message());
                out.writeLong(o.value());
                out.writeLong(o.index());
            }
        });
    }

    /** Reads a snapshot; one written before request outcomes were kept has none. */
    public static Snapshot decodeSnapshot(byte[] bytes, int requestsCapacity) {
        return read(bytes, in -> {
            MetadataState state = readState(in);
            List<Map.Entry<Uuid, AppliedRequests.Outcome>> entries = new ArrayList<>();
            if (in.available() > 0) {
                int n = in.readInt();
                for (int i = 0; i < n; i++) {
                    Uuid id = readUuid(in);
                    entries.add(Map.entry(id, new AppliedRequests.Outcome(in.readShort(), readNullable(in), in.readLong(),
                            in.readLong())));
                }
            }
            return new Snapshot(state, AppliedRequests.of(requestsCapacity, entries));
        });
    }

    public static byte[] encodeState(MetadataState state) {
        return write(out -> writeState(out, state));
    }

    private static void writeState(DataOutputStream out, MetadataState state) throws IOException {
        out.writeByte(VERSION);
        out.writeLong(state.nextProducerId());
        out.writeInt(state.brokers().size());
        for (BrokerRegistration b : state.brokers().values()) {
            out.writeInt(b.id());
            out.writeUTF(b.host());
            out.writeInt(b.port());
            writeNullable(out, b.rack());
            writeUuid(out, b.incarnation());
            out.writeLong(b.epoch());
            out.writeBoolean(b.fenced());
        }
        out.writeInt(state.topics().size());
        for (TopicMetadata t : state.topics().values()) {
            out.writeUTF(t.name());
            writeUuid(out, t.id());
            writeConfigs(out, t.configs());
            out.writeInt(t.partitionCount());
            for (PartitionRegistration p : t.partitions()) {
                writeInts(out, p.replicas());
                writeInts(out, p.isr());
                out.writeInt(p.leader());
                out.writeInt(p.leaderEpoch());
                out.writeInt(p.partitionEpoch());
                writeInts(out, p.addingReplicas());
                writeInts(out, p.removingReplicas());
            }
        }
        // a trailing section, so snapshots written before dynamic broker configs still read
        out.writeInt(state.brokerConfigs().size());
        for (Map.Entry<String, Map<String, String>> e : state.brokerConfigs().entrySet()) {
            out.writeUTF(e.getKey());
            writeConfigs(out, e.getValue());
        }
    }

    public static MetadataState decodeState(byte[] bytes) {
        return read(bytes, MetadataCodec::readState);
    }

    private static MetadataState readState(DataInputStream in) throws IOException {
        checkVersion(in.readByte());
        long nextProducerId = in.readLong();
        Map<Integer, BrokerRegistration> brokers = new TreeMap<>();
        int nb = in.readInt();
        for (int i = 0; i < nb; i++) {
            BrokerRegistration b = new BrokerRegistration(in.readInt(), in.readUTF(), in.readInt(), readNullable(in),
                    readUuid(in), in.readLong(), in.readBoolean());
            brokers.put(b.id(), b);
        }
        Map<String, TopicMetadata> topics = new TreeMap<>();
        int nt = in.readInt();
        for (int i = 0; i < nt; i++) {
            String name = in.readUTF();
            Uuid id = readUuid(in);
            Map<String, String> configs = readConfigs(in);
            int np = in.readInt();
            List<PartitionRegistration> parts = new ArrayList<>(np);
            for (int p = 0; p < np; p++) {
                parts.add(new PartitionRegistration(readInts(in), readInts(in), in.readInt(), in.readInt(), in.readInt(),
                        readInts(in), readInts(in)));
            }
            topics.put(name, new TopicMetadata(name, id, parts, configs));
        }
        Map<String, Map<String, String>> brokerConfigs = new TreeMap<>();
        if (in.available() > 0) {
            int nc = in.readInt();
            for (int i = 0; i < nc; i++) {
                brokerConfigs.put(in.readUTF(), readConfigs(in));
            }
        }
        return new MetadataState(brokers, topics, nextProducerId, brokerConfigs);
    }

    private static void writeCommand(DataOutput out, MetadataCommand command) throws IOException {
        switch (command) {
            case MetadataCommand.RegisterBroker r -> {
                out.writeByte(REGISTER_BROKER);
                out.writeInt(r.brokerId());
                out.writeUTF(r.host());
                out.writeInt(r.port());
                writeNullable(out, r.rack());
                writeUuid(out, r.incarnation());
            }
            case MetadataCommand.UnfenceBroker u -> {
                out.writeByte(UNFENCE_BROKER);
                out.writeInt(u.brokerId());
                out.writeLong(u.brokerEpoch());
            }
            case MetadataCommand.FenceBroker f -> {
                out.writeByte(FENCE_BROKER);
                out.writeInt(f.brokerId());
                out.writeLong(f.brokerEpoch());
            }
            case MetadataCommand.CreateTopic c -> {
                out.writeByte(CREATE_TOPIC);
                out.writeUTF(c.name());
                writeUuid(out, c.topicId());
                writeAssignment(out, c.assignment());
                writeConfigs(out, c.configs());
            }
            case MetadataCommand.DeleteTopic d -> {
                out.writeByte(DELETE_TOPIC);
                writeUuid(out, d.topicId());
            }
            case MetadataCommand.CreatePartitions c -> {
                out.writeByte(CREATE_PARTITIONS);
                writeUuid(out, c.topicId());
                out.writeInt(c.expectedCount());
                writeAssignment(out, c.newAssignment());
            }
            case MetadataCommand.AlterTopicConfigs a -> {
                out.writeByte(ALTER_TOPIC_CONFIGS);
                writeUuid(out, a.topicId());
                writeConfigs(out, a.configs());
            }
            case MetadataCommand.ChangePartition c -> {
                out.writeByte(CHANGE_PARTITION);
                writeUuid(out, c.topicId());
                out.writeInt(c.partition());
                out.writeInt(c.expectedPartitionEpoch());
                out.writeInt(c.leader());
                out.writeInt(c.leaderEpoch());
                writeInts(out, c.isr());
            }
            case MetadataCommand.ReassignPartition r -> {
                out.writeByte(REASSIGN_PARTITION);
                writeUuid(out, r.topicId());
                out.writeInt(r.partition());
                out.writeInt(r.expectedPartitionEpoch());
                writeInts(out, r.replicas());
                writeInts(out, r.isr());
                out.writeInt(r.leader());
                out.writeInt(r.leaderEpoch());
                writeInts(out, r.addingReplicas());
                writeInts(out, r.removingReplicas());
            }
            case MetadataCommand.ProducerIdBlock b -> {
                out.writeByte(PRODUCER_ID_BLOCK);
                out.writeInt(b.size());
            }
            case MetadataCommand.AlterBrokerConfigs a -> {
                out.writeByte(ALTER_BROKER_CONFIGS);
                out.writeUTF(a.resource());
                writeConfigs(out, a.configs());
            }
        }
    }

    private static MetadataCommand readCommand(DataInput in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case REGISTER_BROKER -> new MetadataCommand.RegisterBroker(in.readInt(), in.readUTF(), in.readInt(),
                    readNullable(in), readUuid(in));
            case UNFENCE_BROKER -> new MetadataCommand.UnfenceBroker(in.readInt(), in.readLong());
            case FENCE_BROKER -> new MetadataCommand.FenceBroker(in.readInt(), in.readLong());
            case CREATE_TOPIC -> new MetadataCommand.CreateTopic(in.readUTF(), readUuid(in), readAssignment(in),
                    readConfigs(in));
            case DELETE_TOPIC -> new MetadataCommand.DeleteTopic(readUuid(in));
            case CREATE_PARTITIONS -> new MetadataCommand.CreatePartitions(readUuid(in), in.readInt(), readAssignment(in));
            case ALTER_TOPIC_CONFIGS -> new MetadataCommand.AlterTopicConfigs(readUuid(in), readConfigs(in));
            case CHANGE_PARTITION -> new MetadataCommand.ChangePartition(readUuid(in), in.readInt(), in.readInt(),
                    in.readInt(), in.readInt(), readInts(in));
            case PRODUCER_ID_BLOCK -> new MetadataCommand.ProducerIdBlock(in.readInt());
            case REASSIGN_PARTITION -> new MetadataCommand.ReassignPartition(readUuid(in), in.readInt(), in.readInt(),
                    readInts(in), readInts(in), in.readInt(), in.readInt(), readInts(in), readInts(in));
            case ALTER_BROKER_CONFIGS -> new MetadataCommand.AlterBrokerConfigs(in.readUTF(), readConfigs(in));
            default -> throw new IOException("Unknown metadata command type " + type);
        };
    }

    private static void checkVersion(byte v) throws IOException {
        if (v != VERSION) {
            throw new IOException("Unsupported metadata format version " + v + " (this broker reads " + VERSION + ")");
        }
    }

    /** A string that may be null: a presence flag, then the string. */
    public static void writeNullable(DataOutput out, String s) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) {
            out.writeUTF(s);
        }
    }

    public static String readNullable(DataInput in) throws IOException {
        return in.readBoolean() ? in.readUTF() : null;
    }

    private static void writeUuid(DataOutput out, Uuid id) throws IOException {
        out.writeLong(id.getMostSignificantBits());
        out.writeLong(id.getLeastSignificantBits());
    }

    private static Uuid readUuid(DataInput in) throws IOException {
        return new Uuid(in.readLong(), in.readLong());
    }

    private static void writeInts(DataOutput out, List<Integer> ints) throws IOException {
        out.writeInt(ints.size());
        for (int i : ints) {
            out.writeInt(i);
        }
    }

    private static List<Integer> readInts(DataInput in) throws IOException {
        int n = in.readInt();
        List<Integer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(in.readInt());
        }
        return out;
    }

    private static void writeAssignment(DataOutput out, List<List<Integer>> assignment) throws IOException {
        out.writeInt(assignment.size());
        for (List<Integer> r : assignment) {
            writeInts(out, r);
        }
    }

    private static List<List<Integer>> readAssignment(DataInput in) throws IOException {
        int n = in.readInt();
        List<List<Integer>> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(readInts(in));
        }
        return out;
    }

    private static void writeConfigs(DataOutput out, Map<String, String> configs) throws IOException {
        Map<String, String> sorted = new TreeMap<>(configs);
        out.writeInt(sorted.size());
        for (Map.Entry<String, String> e : sorted.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
    }

    private static Map<String, String> readConfigs(DataInput in) throws IOException {
        int n = in.readInt();
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            out.put(in.readUTF(), in.readUTF());
        }
        return out;
    }

    /** Writes one encoding to a stream (the metadata records, and the quorum's requests and replies). */
    public interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    /** Reads one encoding from a stream. */
    public interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    public static byte[] write(Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    public static <T> T read(byte[] bytes, Reader<T> reader) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return reader.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
