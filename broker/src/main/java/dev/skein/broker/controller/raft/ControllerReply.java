package dev.skein.broker.controller.raft;

import dev.skein.broker.controller.MetadataCodec;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.protocol.Errors;

/**
 * The answer of the active controller (or of one applied log entry): a Kafka error code and
 * message (NONE on success), a value (broker epoch, first producer id, heartbeat flags), the log
 * index the answer reflects (so the asking node can wait until it has applied that far) and, for
 * topic changes, the topic as it is (or would be) afterwards, in {@link dev.skein.broker.controller.MetadataCodec}'s
 * snapshot form. Encoded as {@code version:u8(=1) error:i16 message:nullable-utf value:i64 index:i64 topic:len-prefixed}.
 */
record ControllerReply(short errorCode, String message, long value, long index, byte[] topic) {
    static final byte VERSION = 1;

    static ControllerReply ok(long value, long index, byte[] topic) {
        return new ControllerReply(Errors.NONE.code(), null, value, index, topic);
    }

    /** The answer a log entry gave: the outcome of its request. */
    static ControllerReply of(dev.skein.broker.controller.AppliedRequests.Outcome o) {
        return new ControllerReply(o.errorCode(), o.message(), o.value(), o.index(), null);
    }

    static ControllerReply error(Throwable e, long index) {
        Errors error = Errors.forException(e);
        return new ControllerReply(error.code(), e.getMessage(), 0, index, null);
    }

    /** Throws the Kafka exception this reply carries, if any. */
    ControllerReply throwIfError() {
        if (errorCode != Errors.NONE.code()) {
            ApiException e = Errors.forCode(errorCode).exception(message);
            throw e != null ? e : new UnknownServerException(message);
        }
        return this;
    }

    byte[] encode() {
        return MetadataCodec.write(out -> {
            out.writeByte(VERSION);
            out.writeShort(errorCode);
            out.writeBoolean(message != null);
            if (message != null) {
                out.writeUTF(message.length() > 10_000 ? message.substring(0, 10_000) : message);
            }
            out.writeLong(value);
            out.writeLong(index);
            out.writeInt(topic == null ? -1 : topic.length);
            if (topic != null) {
                out.write(topic);
            }
        });
    }

    static ControllerReply decode(byte[] bytes) {
        return MetadataCodec.read(bytes, in -> {
            byte version = in.readByte();
            if (version != VERSION) {
                throw new java.io.IOException("Unsupported controller reply version " + version);
            }
            short code = in.readShort();
            String message = in.readBoolean() ? in.readUTF() : null;
            long value = in.readLong();
            long index = in.readLong();
            int n = in.readInt();
            byte[] topic = null;
            if (n >= 0) {
                topic = new byte[n];
                in.readFully(topic);
            }
            return new ControllerReply(code, message, value, index, topic);
        });
    }
}
