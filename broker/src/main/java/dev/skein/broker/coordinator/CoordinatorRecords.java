package dev.skein.broker.coordinator;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary format of the coordinator's records in {@code __consumer_offsets}.
 *
 * <p>Every key starts with a short record type ({@link #OFFSET_COMMIT_KEY} or
 * {@link #GROUP_METADATA_KEY}); every value starts with a short schema version, so fields can be added
 * later by bumping the version. Strings are a short length (-1 = null) plus UTF-8 bytes, byte arrays an
 * int length (-1 = null) plus the bytes. Decoding rejects unknown types and versions with
 * {@link IllegalArgumentException}.
 */
public final class CoordinatorRecords {
    public static final short OFFSET_COMMIT_KEY = 1;
    public static final short GROUP_METADATA_KEY = 2;
    public static final short OFFSET_VALUE_VERSION = 0;
    public static final short GROUP_VALUE_VERSION = 0;

    /** A committed offset; {@code expireTimestampMs} is -1 unless the commit asked for its own retention (v2-4). */
    public record OffsetValue(long offset, int leaderEpoch, String metadata, long commitTimestampMs, long expireTimestampMs) {
    }

    /** One member as persisted with its group: its subscription is the metadata of the selected protocol. */
    public record MemberValue(String memberId, String groupInstanceId, String clientId, String clientHost,
                              int rebalanceTimeoutMs, int sessionTimeoutMs, byte[] subscription, byte[] assignment) {
    }

    /** A group's metadata; {@code protocolType}, {@code protocolName} and {@code leader} may be null. */
    public record GroupValue(String protocolType, int generation, String protocolName, String leader,
                             long currentStateTimestampMs, List<MemberValue> members) {
    }

    /** A decoded record: the key plus its value, or a null value for a tombstone. */
    public sealed interface Decoded permits OffsetRecord, GroupRecord {
        String groupId();
    }

    public record OffsetRecord(String groupId, String topic, int partition, OffsetValue value) implements Decoded {
    }

    public record GroupRecord(String groupId, GroupValue value) implements Decoded {
    }

    private CoordinatorRecords() {
    }

    public static CoordinatorRecord offsetCommit(String groupId, String topic, int partition, OffsetValue value) {
        return new CoordinatorRecord(offsetKey(groupId, topic, partition), value == null ? null : encode(value));
    }

    public static CoordinatorRecord offsetTombstone(String groupId, String topic, int partition) {
        return new CoordinatorRecord(offsetKey(groupId, topic, partition), null);
    }

    public static CoordinatorRecord groupMetadata(String groupId, GroupValue value) {
        return new CoordinatorRecord(groupKey(groupId), value == null ? null : encode(value));
    }

    public static CoordinatorRecord groupTombstone(String groupId) {
        return new CoordinatorRecord(groupKey(groupId), null);
    }

    public static Decoded decode(CoordinatorRecord record) {
        ByteBuffer key = ByteBuffer.wrap(record.key());
        short type = key.getShort();
        switch (type) {
            case OFFSET_COMMIT_KEY -> {
                String group = readString(key);
                String topic = readString(key);
                int partition = key.getInt();
                OffsetValue value = record.value() == null ? null : decodeOffsetValue(ByteBuffer.wrap(record.value()));
                return new OffsetRecord(group, topic, partition, value);
            }
            case GROUP_METADATA_KEY -> {
                String group = readString(key);
                GroupValue value = record.value() == null ? null : decodeGroupValue(ByteBuffer.wrap(record.value()));
                return new GroupRecord(group, value);
            }
            default -> throw new IllegalArgumentException("Unknown coordinator record key type " + type);
        }
    }

    private static byte[] offsetKey(String groupId, String topic, int partition) {
        Writer w = new Writer();
        w.putShort(OFFSET_COMMIT_KEY);
        w.putString(groupId);
        w.putString(topic);
        w.putInt(partition);
        return w.toArray();
    }

    private static byte[] groupKey(String groupId) {
        Writer w = new Writer();
        w.putShort(GROUP_METADATA_KEY);
        w.putString(groupId);
        return w.toArray();
    }

    private static byte[] encode(OffsetValue v) {
        Writer w = new Writer();
        w.putShort(OFFSET_VALUE_VERSION);
        w.putLong(v.offset());
        w.putInt(v.leaderEpoch());
        w.putString(v.metadata());
        w.putLong(v.commitTimestampMs());
        w.putLong(v.expireTimestampMs());
        return w.toArray();
    }

    private static OffsetValue decodeOffsetValue(ByteBuffer b) {
        short version = b.getShort();
        if (version != OFFSET_VALUE_VERSION) {
            throw new IllegalArgumentException("Unknown offset commit value version " + version);
        }
        return new OffsetValue(b.getLong(), b.getInt(), readString(b), b.getLong(), b.getLong());
    }

    private static byte[] encode(GroupValue v) {
        Writer w = new Writer();
        w.putShort(GROUP_VALUE_VERSION);
        w.putString(v.protocolType());
        w.putInt(v.generation());
        w.putString(v.protocolName());
        w.putString(v.leader());
        w.putLong(v.currentStateTimestampMs());
        w.putInt(v.members().size());
        for (MemberValue m : v.members()) {
            w.putString(m.memberId());
            w.putString(m.groupInstanceId());
            w.putString(m.clientId());
            w.putString(m.clientHost());
            w.putInt(m.rebalanceTimeoutMs());
            w.putInt(m.sessionTimeoutMs());
            w.putBytes(m.subscription());
            w.putBytes(m.assignment());
        }
        return w.toArray();
    }

    private static GroupValue decodeGroupValue(ByteBuffer b) {
        short version = b.getShort();
        if (version != GROUP_VALUE_VERSION) {
            throw new IllegalArgumentException("Unknown group metadata value version " + version);
        }
        String protocolType = readString(b);
        int generation = b.getInt();
        String protocolName = readString(b);
        String leader = readString(b);
        long stateTimestamp = b.getLong();
        int count = b.getInt();
        List<MemberValue> members = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            members.add(new MemberValue(readString(b), readString(b), readString(b), readString(b),
                    b.getInt(), b.getInt(), readBytes(b), readBytes(b)));
        }
        return new GroupValue(protocolType, generation, protocolName, leader, stateTimestamp, members);
    }

    private static String readString(ByteBuffer b) {
        short len = b.getShort();
        if (len < 0) {
            return null;
        }
        byte[] bytes = new byte[len];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(ByteBuffer b) {
        int len = b.getInt();
        if (len < 0) {
            return null;
        }
        byte[] bytes = new byte[len];
        b.get(bytes);
        return bytes;
    }

    /** A growable big-endian buffer. */
    private static final class Writer {
        private ByteBuffer buf = ByteBuffer.allocate(64);

        void putShort(short v) {
            ensure(2).putShort(v);
        }

        void putInt(int v) {
            ensure(4).putInt(v);
        }

        void putLong(long v) {
            ensure(8).putLong(v);
        }

        void putString(String s) {
            if (s == null) {
                putShort((short) -1);
                return;
            }
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > Short.MAX_VALUE) {
                throw new IllegalArgumentException("String too long for a coordinator record: " + bytes.length + " bytes");
            }
            putShort((short) bytes.length);
            ensure(bytes.length).put(bytes);
        }

        void putBytes(byte[] bytes) {
            if (bytes == null) {
                putInt(-1);
                return;
            }
            putInt(bytes.length);
            ensure(bytes.length).put(bytes);
        }

        private ByteBuffer ensure(int n) {
            if (buf.remaining() < n) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n));
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
            return buf;
        }

        byte[] toArray() {
            byte[] out = new byte[buf.position()];
            System.arraycopy(buf.array(), 0, out, 0, out.length);
            return out;
        }
    }
}
