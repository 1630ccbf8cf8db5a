package dev.skein.broker.coordinator;

/**
 * One record of the internal {@code __consumer_offsets} topic as the coordinator writes it: key and
 * value in the {@link CoordinatorRecords} format; a null value is a tombstone that deletes the key.
 */
public record CoordinatorRecord(byte[] key, byte[] value) {
    public boolean isTombstone() {
        return value == null;
    }
}
