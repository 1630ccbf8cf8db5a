package dev.skein.broker.coordinator;

import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The admin side of groups: ListGroups, DescribeGroups and DeleteGroups over the groups that
 * {@link GroupMetadataManager} owns. Runs on the coordinator thread like the rest of the state.
 */
final class GroupAdmin {
    private static final Logger log = LoggerFactory.getLogger(GroupAdmin.class);

    private final GroupMetadataManager manager;

    GroupAdmin(GroupMetadataManager manager) {
        this.manager = manager;
    }

    ListGroupsResponseData listGroups(ListGroupsRequestData req, short version) {
        Set<String> states = new HashSet<>();
        if (version >= 4) {
            req.statesFilter().forEach(s -> states.add(s.toLowerCase(Locale.ROOT)));
        }
        Set<String> types = new HashSet<>();
        if (version >= 5) {
            req.typesFilter().forEach(t -> types.add(t.toLowerCase(Locale.ROOT)));
        }
        ListGroupsResponseData resp = new ListGroupsResponseData();
        if (!types.isEmpty() && !types.contains("classic")) {
            return resp;
        }
        manager.groups().values().stream()
                .filter(g -> !g.isInState(GroupState.DEAD))
                .filter(g -> states.isEmpty() || states.contains(g.state().wireName().toLowerCase(Locale.ROOT)))
                .sorted(java.util.Comparator.comparing(ClassicGroup::groupId))
                .forEach(g -> resp.groups().add(new ListGroupsResponseData.ListedGroup()
                        .setGroupId(g.groupId())
                        .setProtocolType(g.protocolType() == null ? "" : g.protocolType())
                        .setGroupState(g.state().wireName())
                        .setGroupType("classic")));
        return resp;
    }

    DescribeGroupsResponseData describeGroups(DescribeGroupsRequestData req, short version) {
        DescribeGroupsResponseData resp = new DescribeGroupsResponseData();
        for (String groupId : req.groups()) {
            if (groupId == null) {
                resp.groups().add(new DescribeGroupsResponseData.DescribedGroup().setErrorCode(Errors.INVALID_GROUP_ID.code()));
                continue;
            }
            ClassicGroup group = manager.groups().get(groupId);
            if (group == null || group.isInState(GroupState.DEAD)) {
                DescribeGroupsResponseData.DescribedGroup dg = new DescribeGroupsResponseData.DescribedGroup().setGroupId(groupId);
                if (version >= 6) {
                    dg.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + groupId + " not found.");
                } else {
                    dg.setGroupState(GroupState.DEAD.wireName());
                }
                resp.groups().add(dg);
                continue;
            }
            boolean stable = group.isInState(GroupState.STABLE);
            DescribeGroupsResponseData.DescribedGroup dg = new DescribeGroupsResponseData.DescribedGroup()
                    .setGroupId(groupId)
                    .setGroupState(group.state().wireName())
                    .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
                    .setProtocolData(stable ? group.protocolName() : "");
            for (GroupMember m : group.members()) {
                byte[] metadata = stable ? m.metadata(group.protocolName()) : null;
                dg.members().add(new DescribeGroupsResponseData.DescribedGroupMember()
                        .setMemberId(m.memberId())
                        .setGroupInstanceId(m.groupInstanceId())
                        .setClientId(m.clientId())
                        .setClientHost(m.clientHost())
                        .setMemberMetadata(metadata == null ? new byte[0] : metadata)
                        .setMemberAssignment(stable ? m.assignment() : new byte[0]));
            }
            resp.groups().add(dg);
        }
        return resp;
    }

    /** Deletes Empty groups with their offsets (tombstones); answers once the tombstones are stored. */
    CompletableFuture<DeleteGroupsResponseData> deleteGroups(DeleteGroupsRequestData req, short version, long nowMs) {
        DeleteGroupsResponseData resp = new DeleteGroupsResponseData();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (String groupId : req.groupsNames()) {
            if (groupId != null && resp.results().find(groupId) != null) {
                continue;
            }
            DeleteGroupsResponseData.DeletableGroupResult result = new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(groupId);
            resp.results().add(result);
            ClassicGroup group = groupId == null ? null : manager.groups().get(groupId);
            if (groupId == null) {
                result.setErrorCode(Errors.INVALID_GROUP_ID.code());
            } else if (group == null || group.isInState(GroupState.DEAD)) {
                result.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code());
            } else if (!group.isInState(GroupState.EMPTY)) {
                result.setErrorCode(Errors.NON_EMPTY_GROUP.code());
            } else {
                List<CoordinatorRecord> records = new ArrayList<>();
                group.offsets().forEach((topic, parts) -> parts.keySet().forEach(
                        p -> records.add(CoordinatorRecords.offsetTombstone(groupId, topic, p))));
                records.add(CoordinatorRecords.groupTombstone(groupId));
                manager.removeGroup(group, nowMs);
                log.info("Deleted group {} ({} offsets)", groupId, records.size() - 1);
                CompletableFuture<Void> done = new CompletableFuture<>();
                pending.add(done);
                manager.append(groupId, records, failure -> {
                    if (failure != null) {
                        result.setErrorCode(ErrorResponses.appendFailure(failure, false).code());
                    }
                    done.complete(null);
                });
            }
        }
        return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(v -> resp);
    }
}
