/**
 * Kafka's classic consumer-group coordinator.
 *
 * <p>{@link dev.skein.broker.coordinator.GroupCoordinator} is the entry point for the network layer:
 * it owns one thread that runs {@code CoordinatorState}, a plain single-threaded state machine driven
 * by the current time ({@code GroupMetadataManager} for membership and group admin,
 * {@code OffsetMetadataManager} for committed offsets). Group states and their legal transitions are
 * listed in {@link dev.skein.broker.coordinator.GroupState}. Durable state goes through
 * {@link dev.skein.broker.coordinator.OffsetStore} as records in the
 * {@link dev.skein.broker.coordinator.CoordinatorRecords} format and is rebuilt from them at start.
 */
package dev.skein.broker.coordinator;
