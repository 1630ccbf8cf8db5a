package dev.skein.operator.group;

import dev.skein.operator.model.OffsetReset;
import dev.skein.operator.model.PartitionLag;
import dev.skein.operator.model.PartitionOffset;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The offset-reset decision table and the lag arithmetic of a SkeinConsumerGroup. */
class OffsetResetDecisionTest {

    private static OffsetReset reset(OffsetReset.Target to, List<String> topics) {
        OffsetReset r = new OffsetReset();
        r.setTo(to);
        r.setTopics(topics);
        return r;
    }

    @Test
    void noResetInTheSpecMeansNothingToDo() {
        assertThat(OffsetResetDecision.decide(null, null, 0)).isEqualTo(new OffsetResetDecision.None());
    }

    @Test
    void newResetOfAnEmptyGroupIsAppliedAndRememberedByFingerprint() {
        OffsetReset r = reset(OffsetReset.Target.Earliest, List.of());

        OffsetResetDecision.Decision d = OffsetResetDecision.decide(r, null, 0);

        assertThat(d).isEqualTo(new OffsetResetDecision.Apply(OffsetResetDecision.fingerprint(r)));
    }

    @Test
    void resetAlreadyAppliedIsNotAppliedAgain() {
        OffsetReset r = reset(OffsetReset.Target.Latest, List.of("orders"));

        assertThat(OffsetResetDecision.decide(r, OffsetResetDecision.fingerprint(r), 0))
                .isEqualTo(new OffsetResetDecision.None());
    }

    @Test
    void resetWaitsWhileTheGroupHasActiveMembers() {
        OffsetResetDecision.Decision d = OffsetResetDecision.decide(reset(OffsetReset.Target.Earliest, List.of()), null, 2);

        assertThat(d).isInstanceOfSatisfying(OffsetResetDecision.Wait.class,
                w -> assertThat(w.message()).contains("2 active member(s)"));
    }

    @Test
    void changingTheResetChangesTheFingerprintButTopicOrderDoesNot() {
        String ab = OffsetResetDecision.fingerprint(reset(OffsetReset.Target.Earliest, List.of("a", "b")));
        String ba = OffsetResetDecision.fingerprint(reset(OffsetReset.Target.Earliest, List.of("b", "a")));
        String latest = OffsetResetDecision.fingerprint(reset(OffsetReset.Target.Latest, List.of("a", "b")));
        OffsetReset explicit = reset(OffsetReset.Target.Offsets, List.of());
        PartitionOffset o = new PartitionOffset();
        o.setTopic("a");
        o.setPartition(0);
        o.setOffset(5L);
        explicit.setOffsets(List.of(o));
        String five = OffsetResetDecision.fingerprint(explicit);
        o.setOffset(6L);

        assertThat(ab).isEqualTo(ba).isNotEqualTo(latest);
        assertThat(OffsetResetDecision.fingerprint(explicit)).isNotEqualTo(five);
    }

    @Test
    void resetWithoutTopicsMovesTheCommittedPartitionsAndWithTopicsEveryPartitionOfThem() {
        List<TopicPartition> committed = List.of(new TopicPartition("a", 1), new TopicPartition("b", 0));

        assertThat(OffsetResetDecision.partitions(reset(OffsetReset.Target.Earliest, List.of()), committed, Map.of()))
                .containsExactly(new TopicPartition("a", 1), new TopicPartition("b", 0));
        assertThat(OffsetResetDecision.partitions(reset(OffsetReset.Target.Earliest, List.of("a")), committed,
                Map.of("a", 3))).containsExactly(new TopicPartition("a", 0), new TopicPartition("a", 1),
                new TopicPartition("a", 2));
    }

    @Test
    void lagIsLogEndMinusCommittedAndUnknownEndsCountNothing() {
        TopicPartition a0 = new TopicPartition("a", 0);
        TopicPartition a1 = new TopicPartition("a", 1);
        TopicPartition b0 = new TopicPartition("b", 0);

        List<PartitionLag> lags = GroupLag.of(Map.of(a1, 20L, a0, 10L, b0, 5L), Map.of(a0, 50L, a1, 20L));

        assertThat(lags).extracting(l -> l.getTopic() + "-" + l.getPartition() + ":" + l.getLag())
                .containsExactly("a-0:40", "a-1:0", "b-0:null");
        assertThat(GroupLag.total(lags)).isEqualTo(40);
    }
}
