package dev.skein.broker.api;

import dev.skein.broker.server.FetchRequestPartition;
import dev.skein.broker.server.FetchResult;
import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class FetchSessionsTest {
    private static final Uuid TOPIC = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");
    private final ManualTime time = new ManualTime();

    @Test
    void idsAreDistinctAndNeverZero() {
        FetchSessions cache = new FetchSessions(100, 1_000, time, new Random(7));
        Set<Integer> ids = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            FetchSessions.Session s = cache.open(false, true);
            assertThat(s.id).isNotZero();
            assertThat(ids.add(s.id)).isTrue();
        }
        assertThat(cache.size()).isEqualTo(100);
    }

    @Test
    void aFullCacheEvictsOnlyAStaleSessionOrAConsumersForAFollower() {
        FetchSessions cache = new FetchSessions(2, 1_000, time, new Random(1));
        FetchSessions.Session consumer = cache.open(false, true);
        time.advance(10);
        FetchSessions.Session follower = cache.open(true, true);
        time.advance(10);
        // full, nothing stale: another consumer gets no session
        assertThat(cache.open(false, true)).isNull();
        // a follower displaces the least recently used consumer
        FetchSessions.Session secondFollower = cache.open(true, true);
        assertThat(secondFollower).isNotNull();
        assertThat(cache.get(consumer.id)).isNull();
        // only followers left and none stale: neither kind gets one
        assertThat(cache.open(true, true)).isNull();
        assertThat(cache.open(false, true)).isNull();
        // once the least recently used one has been idle long enough, it makes room
        time.advance(1_000);
        assertThat(cache.get(secondFollower.id)).isNotNull();
        FetchSessions.Session late = cache.open(false, true);
        assertThat(late).isNotNull();
        assertThat(cache.get(follower.id)).as("the stale one was evicted").isNull();
        assertThat(cache.get(secondFollower.id)).isNotNull();
    }

    @Test
    void noSlotsMeansNoSessions() {
        assertThat(new FetchSessions(0, 1_000, time, new Random(1)).open(true, true)).isNull();
    }

    @Test
    void anIncrementalAnswerCarriesOnlyWhatChangedAndRotatesTheAnsweredToTheEnd() {
        FetchSessions.Session s = new FetchSessions(10, 1_000, time, new Random(1)).open(true, true);
        FetchSessions.Key k0 = key(0);
        FetchSessions.Key k1 = key(1);
        FetchSessions.Key k2 = key(2);
        for (FetchSessions.Key k : List.of(k0, k1, k2)) {
            s.put(k, request(k.partition()));
        }
        FetchSessions.Cached[] entries = s.entries();
        assertThat(Arrays.stream(entries).map(c -> c.key)).containsExactly(k0, k1, k2);
        // the full answer carries everything and remembers what it told
        assertThat(s.answerAll(entries, List.of(empty(5, 0), empty(7, 0), empty(0, 0)))).containsExactly(0, 1, 2);
        assertThat(s.answerNews(entries, List.of(empty(5, 0), empty(7, 0), empty(0, 0)))).as("nothing changed").isEmpty();
        assertThat(s.keys()).as("a full answer keeps the order").containsExactly(k0, k1, k2);

        // new records on k0, a new log start offset on k2
        assertThat(s.answerNews(entries, List.of(new FetchResult(Errors.NONE, 6, 0, records()), empty(7, 0), empty(0, 3))))
                .containsExactly(0, 2);
        assertThat(s.keys()).as("answered partitions go last, in order").containsExactly(k1, k0, k2);

        // new fetch parameters for a partition the session has keep its place
        s.put(k0, request(0));
        assertThat(s.keys()).containsExactly(k1, k0, k2);
        assertThat(s.get(k0).highWatermark).as("and what the client was told").isEqualTo(6);

        entries = s.entries();
        assertThat(s.answerNews(entries, List.of(FetchResult.error(Errors.NOT_LEADER_OR_FOLLOWER), empty(6, 0),
                empty(0, 3)))).as("an error is always answered").containsExactly(0);
        assertThat(s.keys()).containsExactly(k0, k2, k1);

        // a partition forgotten meanwhile is neither answered nor put back; k1's watermark is news again after its error
        entries = s.entries();
        s.remove(k0);
        assertThat(s.answerNews(entries, List.of(new FetchResult(Errors.NONE, 9, 0, records()), empty(0, 3), empty(7, 0))))
                .containsExactly(2);
        assertThat(s.keys()).containsExactly(k2, k1);
        assertThat(s.get(k0)).isNull();
        assertThat(s.size()).isEqualTo(2);

        // taken back, it is new to the session: last, and everything about it is news
        s.put(k0, request(0));
        assertThat(s.keys()).containsExactly(k2, k1, k0);
        assertThat(s.answerNews(s.entries(), List.of(empty(0, 3), empty(7, 0), empty(9, 0)))).containsExactly(2);
    }

    @Test
    void theOpeningRequestsPartitionsKeepTheirOrderAndAPartitionNamedTwiceItsFirstPlaceAndLastParameters() {
        FetchSessions.Session s = new FetchSessions(10, 1_000, time, new Random(1)).open(false, true);
        FetchRequestPartition again = new FetchRequestPartition(new TopicIdPartition(TOPIC, 0, "t"), 42, 1 << 20,
                Optional.empty());
        s.open(List.of(request(2), request(0), request(1), again), true);
        assertThat(s.keys()).containsExactly(key(2), key(0), key(1));
        assertThat(s.get(key(0)).request.fetchOffset()).isEqualTo(42);

        // an incremental request sets what it names and adds what is new at the end
        FetchRequestPartition moved = new FetchRequestPartition(new TopicIdPartition(TOPIC, 2, "t"), 7, 1 << 20,
                Optional.empty());
        s.update(List.of(moved, request(3)), true);
        assertThat(s.keys()).containsExactly(key(2), key(0), key(1), key(3));
        assertThat(s.get(key(2)).request.fetchOffset()).isEqualTo(7);
    }

    private static FetchSessions.Key key(int partition) {
        return FetchSessions.Key.of(true, TOPIC, "t", partition);
    }

    private static FetchRequestPartition request(int partition) {
        return new FetchRequestPartition(new TopicIdPartition(TOPIC, partition, "t"), 0, 1 << 20, Optional.empty());
    }

    private static FetchResult empty(long highWatermark, long logStartOffset) {
        return new FetchResult(Errors.NONE, highWatermark, logStartOffset, MemoryRecords.EMPTY);
    }

    private static MemoryRecords records() {
        return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("v".getBytes()));
    }
}
