package dev.skein.broker.storage;

/**
 * Answer to OffsetForLeaderEpoch: the largest known epoch not above the requested one, and the offset
 * where it ended (start of the next epoch, or the log end offset). (-1, -1) when the epoch is unknown.
 */
public record EpochEndOffset(int epoch, long endOffset) {
    public static final EpochEndOffset UNDEFINED = new EpochEndOffset(-1, -1L);
}
