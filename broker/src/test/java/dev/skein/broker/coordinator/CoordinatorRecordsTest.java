package dev.skein.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.skein.broker.coordinator.CoordinatorRecords.GroupRecord;
import dev.skein.broker.coordinator.CoordinatorRecords.GroupValue;
import dev.skein.broker.coordinator.CoordinatorRecords.MemberValue;
import dev.skein.broker.coordinator.CoordinatorRecords.OffsetRecord;
import dev.skein.broker.coordinator.CoordinatorRecords.OffsetValue;

class CoordinatorRecordsTest {
    @Test
    void offsetCommitRoundTrips() {
        OffsetValue v = new OffsetValue(42, 7, "meta", 1000, -1);
        CoordinatorRecord r = CoordinatorRecords.offsetCommit("group", "topic", 3, v);
        assertThat(CoordinatorRecords.decode(r)).isEqualTo(new OffsetRecord("group", "topic", 3, v));
    }

    @Test
    void groupMetadataRoundTripsWithNullableFields() {
        MemberValue m = new MemberValue("m-1", null, "client", "/1.2.3.4", 30000, 10000, new byte[]{1, 2}, new byte[]{3});
        MemberValue s = new MemberValue("m-2", "instance", "client", "/1.2.3.5", 30000, 10000, null, new byte[0]);
        GroupValue v = new GroupValue("consumer", 5, "range", "m-1", 1234, List.of(m, s));
        GroupRecord decoded = (GroupRecord) CoordinatorRecords.decode(CoordinatorRecords.groupMetadata("g", v));
        assertThat(decoded.groupId()).isEqualTo("g");
        GroupValue back = decoded.value();
        assertThat(back.protocolType()).isEqualTo("consumer");
        assertThat(back.generation()).isEqualTo(5);
        assertThat(back.protocolName()).isEqualTo("range");
        assertThat(back.leader()).isEqualTo("m-1");
        assertThat(back.currentStateTimestampMs()).isEqualTo(1234);
        assertThat(back.members()).hasSize(2);
        assertThat(back.members().get(0).subscription()).containsExactly(1, 2);
        assertThat(back.members().get(0).groupInstanceId()).isNull();
        assertThat(back.members().get(1).groupInstanceId()).isEqualTo("instance");
        assertThat(back.members().get(1).subscription()).isNull();

        GroupValue empty = new GroupValue(null, 0, null, null, 0, List.of());
        assertThat(((GroupRecord) CoordinatorRecords.decode(CoordinatorRecords.groupMetadata("g", empty))).value()).isEqualTo(empty);
    }

    @Test
    void tombstonesDecodeWithNullValue() {
        assertThat(CoordinatorRecords.decode(CoordinatorRecords.offsetTombstone("g", "t", 0)))
                .isEqualTo(new OffsetRecord("g", "t", 0, null));
        assertThat(CoordinatorRecords.decode(CoordinatorRecords.groupTombstone("g"))).isEqualTo(new GroupRecord("g", null));
    }

    @Test
    void keysOfTheSamePartitionAreEqualSoCompactionKeepsTheLatest() {
        assertThat(CoordinatorRecords.offsetCommit("g", "t", 0, new OffsetValue(1, -1, "", 0, -1)).key())
                .isEqualTo(CoordinatorRecords.offsetTombstone("g", "t", 0).key());
    }

    @Test
    void unknownValueVersionIsRejected() {
        byte[] value = CoordinatorRecords.offsetCommit("g", "t", 0, new OffsetValue(1, -1, "", 0, -1)).value();
        value[1] = 99;
        CoordinatorRecord r = new CoordinatorRecord(CoordinatorRecords.offsetTombstone("g", "t", 0).key(), value);
        assertThatThrownBy(() -> CoordinatorRecords.decode(r)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("version 99");
    }
}
