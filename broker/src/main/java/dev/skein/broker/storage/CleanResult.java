package dev.skein.broker.storage;

/**
 * Outcome of one {@link LogCleaner#clean} pass.
 *
 * @param segmentsCleaned   segments rewritten
 * @param bytesBefore       size of those segments before cleaning
 * @param bytesAfter        size of those segments after cleaning
 * @param recordsRemoved    superseded records and expired tombstones dropped
 * @param cleanerCheckpoint the offset below which the log is now clean (persisted)
 */
public record CleanResult(int segmentsCleaned, long bytesBefore, long bytesAfter, long recordsRemoved,
                          long cleanerCheckpoint) {
    public static CleanResult nothing(long checkpoint) {
        return new CleanResult(0, 0, 0, 0, checkpoint);
    }
}
