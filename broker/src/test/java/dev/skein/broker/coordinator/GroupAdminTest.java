package dev.skein.broker.coordinator;

import static dev.skein.broker.coordinator.Harness.done;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class GroupAdminTest {
    private final Harness h = new Harness();

    private String stableGroup(String groupId) {
        CompletableFuture<JoinGroupResponseData> j = h.joinDynamic(groupId);
        h.advance(3000);
        String m = done(j).memberId();
        done(h.sync(groupId, m, 1, Map.of(m, new byte[]{9})));
        return m;
    }

    @Test
    void listGroupsShowsStateAndTypeAndFiltersByState() {
        stableGroup("stable");
        h.commit("simple", "", -1, "t", 0, 1);
        ListGroupsResponseData all = h.state.listGroups(new ListGroupsRequestData(), (short) 5);
        assertThat(all.groups()).extracting(ListGroupsResponseData.ListedGroup::groupId).containsExactly("simple", "stable");
        assertThat(all.groups()).extracting(ListGroupsResponseData.ListedGroup::groupState).containsExactly("Empty", "Stable");
        assertThat(all.groups()).extracting(ListGroupsResponseData.ListedGroup::protocolType).containsExactly("", "consumer");
        assertThat(all.groups()).extracting(ListGroupsResponseData.ListedGroup::groupType).containsOnly("classic");

        ListGroupsResponseData stableOnly = h.state.listGroups(new ListGroupsRequestData().setStatesFilter(List.of("stable")), (short) 4);
        assertThat(stableOnly.groups()).extracting(ListGroupsResponseData.ListedGroup::groupId).containsExactly("stable");
        ListGroupsResponseData consumerType = h.state.listGroups(new ListGroupsRequestData().setTypesFilter(List.of("consumer")), (short) 5);
        assertThat(consumerType.groups()).isEmpty();
        ListGroupsResponseData classicType = h.state.listGroups(new ListGroupsRequestData().setTypesFilter(List.of("Classic")), (short) 5);
        assertThat(classicType.groups()).hasSize(2);
    }

    @Test
    void describeStableGroupShowsProtocolAndMemberMetadataAndAssignment() {
        String m = stableGroup("g");
        DescribeGroupsResponseData r = h.state.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("g")), (short) 5);
        DescribeGroupsResponseData.DescribedGroup g = r.groups().get(0);
        assertThat(g.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(g.groupState()).isEqualTo("Stable");
        assertThat(g.protocolType()).isEqualTo("consumer");
        assertThat(g.protocolData()).isEqualTo("range");
        assertThat(g.members()).singleElement().satisfies(member -> {
            assertThat(member.memberId()).isEqualTo(m);
            assertThat(member.clientId()).isEqualTo("client");
            assertThat(member.clientHost()).isEqualTo("/127.0.0.1");
            assertThat(member.memberMetadata()).isEqualTo(Harness.subscription("topic-a"));
            assertThat(member.memberAssignment()).containsExactly(9);
        });
    }

    @Test
    void describeRebalancingGroupHidesMetadata() {
        CompletableFuture<JoinGroupResponseData> j = h.joinDynamic("g");
        DescribeGroupsResponseData r = h.state.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("g")), (short) 5);
        assertThat(r.groups().get(0).groupState()).isEqualTo("PreparingRebalance");
        assertThat(r.groups().get(0).protocolData()).isEmpty();
        assertThat(r.groups().get(0).members().get(0).memberMetadata()).isEmpty();
        assertThat(j).isNotDone();
    }

    @Test
    void describeUnknownGroupIsDeadBeforeV6AndGroupIdNotFoundFromV6() {
        DescribeGroupsResponseData v5 = h.state.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("nope")), (short) 5);
        assertThat(v5.groups().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(v5.groups().get(0).groupState()).isEqualTo("Dead");
        DescribeGroupsResponseData v6 = h.state.describeGroups(new DescribeGroupsRequestData().setGroups(List.of("nope")), (short) 6);
        assertThat(v6.groups().get(0).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
    }

    @Test
    void deleteGroupsDeletesOnlyEmptyGroupsAndWritesTombstones() {
        stableGroup("active");
        h.commit("idle", "", -1, "t", 0, 1);
        h.commit("idle", "", -1, "t", 1, 2);
        DeleteGroupsResponseData r = done(h.state.deleteGroups(new DeleteGroupsRequestData()
                .setGroupsNames(List.of("idle", "active", "nope")), (short) 2, h.now()));
        assertThat(r.results().find("idle").errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(r.results().find("active").errorCode()).isEqualTo(Errors.NON_EMPTY_GROUP.code());
        assertThat(r.results().find("nope").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(h.stateOf("idle")).isNull();
        assertThat(h.committed("idle", "t", 0)).isEqualTo(-1);

        // After a restart the deleted group stays deleted.
        Harness reloaded = new Harness(Harness.CONFIG, h.store);
        assertThat(reloaded.stateOf("idle")).isNull();
        assertThat(reloaded.stateOf("active")).isEqualTo(GroupState.STABLE);
    }

    @Test
    void deleteGroupsAnswersAfterTombstonesAreDurable() {
        h.commit("idle", "", -1, "t", 0, 1);
        h.store.holdAppends();
        CompletableFuture<DeleteGroupsResponseData> f = h.state.deleteGroups(
                new DeleteGroupsRequestData().setGroupsNames(List.of("idle")), (short) 2, h.now());
        assertThat(f).isNotDone();
        h.store.releaseAppends();
        assertThat(done(f).results().find("idle").errorCode()).isEqualTo(Errors.NONE.code());
    }
}
