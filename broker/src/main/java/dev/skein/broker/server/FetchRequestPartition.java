package dev.skein.broker.server;

import org.apache.kafka.common.TopicIdPartition;

import java.util.Optional;

/** One partition of a fetch: where to read from and how much. */
public record FetchRequestPartition(TopicIdPartition partition, long fetchOffset, int maxBytes,
                                    Optional<Integer> currentLeaderEpoch) {
}
