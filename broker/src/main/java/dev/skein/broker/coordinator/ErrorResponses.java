package dev.skein.broker.coordinator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;

/**
 * Whole-request error answers for every coordinator API, in the shape of the request's version, and
 * the one place where storage failures become wire error codes.
 */
final class ErrorResponses {
    private ErrorResponses() {
    }

    /**
     * The error a client sees when appending to {@code __consumer_offsets} failed, as Kafka maps it:
     * retriable coordinator errors for replication trouble, NOT_COORDINATOR when the partition moved.
     */
    static Errors appendFailure(Throwable failure, boolean offsetCommit) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        Errors e = Errors.forException(cause);
        return switch (e) {
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT ->
                    Errors.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
            case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE ->
                    offsetCommit ? Errors.INVALID_COMMIT_OFFSET_SIZE : Errors.UNKNOWN_SERVER_ERROR;
            case NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS -> e;
            default -> Errors.UNKNOWN_SERVER_ERROR;
        };
    }

    static JoinGroupResponseData join(JoinGroupRequestData req, Errors error) {
        return join(req.memberId(), error);
    }

    static JoinGroupResponseData join(String memberId, Errors error) {
        return new JoinGroupResponseData().setMemberId(memberId == null ? "" : memberId).setErrorCode(error.code());
    }

    static SyncGroupResponseData sync(Errors error) {
        return new SyncGroupResponseData().setErrorCode(error.code()).setAssignment(new byte[0]);
    }

    static HeartbeatResponseData heartbeat(Errors error) {
        return new HeartbeatResponseData().setErrorCode(error.code());
    }

    static LeaveGroupResponseData leave(Errors error) {
        return new LeaveGroupResponseData().setErrorCode(error.code());
    }

    /** Every partition of the request carries the error (OffsetCommit has no top-level error code). */
    static OffsetCommitResponseData commit(OffsetCommitRequestData req, short version, Errors error) {
        OffsetCommitResponseData resp = new OffsetCommitResponseData();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : req.topics()) {
            OffsetCommitResponseData.OffsetCommitResponseTopic rt = new OffsetCommitResponseData.OffsetCommitResponseTopic();
            if (version >= 10) {
                rt.setTopicId(t.topicId());
            } else {
                rt.setName(t.name());
            }
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                rt.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                        .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
            }
            resp.topics().add(rt);
        }
        return resp;
    }

    /** A group-level error for every group of the request (v8+), or at top and partition level (v1-7). */
    static OffsetFetchResponseData fetch(OffsetFetchRequestData req, short version, Errors error) {
        OffsetFetchResponseData resp = new OffsetFetchResponseData();
        if (version >= 8) {
            for (OffsetFetchRequestData.OffsetFetchRequestGroup g : req.groups()) {
                resp.groups().add(new OffsetFetchResponseData.OffsetFetchResponseGroup()
                        .setGroupId(g.groupId()).setErrorCode(error.code()));
            }
            return resp;
        }
        if (version >= 2) {
            resp.setErrorCode(error.code());
        } else if (req.topics() != null) {
            for (OffsetFetchRequestData.OffsetFetchRequestTopic t : req.topics()) {
                OffsetFetchResponseData.OffsetFetchResponseTopic rt = new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(t.name());
                for (Integer p : t.partitionIndexes()) {
                    rt.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition()
                            .setPartitionIndex(p).setCommittedOffset(-1).setMetadata("").setErrorCode(error.code()));
                }
                resp.topics().add(rt);
            }
        }
        return resp;
    }

    static ListGroupsResponseData listGroups(Errors error) {
        return new ListGroupsResponseData().setErrorCode(error.code());
    }

    static DescribeGroupsResponseData describeGroups(DescribeGroupsRequestData req, Errors error) {
        DescribeGroupsResponseData resp = new DescribeGroupsResponseData();
        for (String g : req.groups()) {
            resp.groups().add(new DescribeGroupsResponseData.DescribedGroup().setGroupId(g).setErrorCode(error.code()));
        }
        return resp;
    }

    static DeleteGroupsResponseData deleteGroups(DeleteGroupsRequestData req, Errors error) {
        DeleteGroupsResponseData resp = new DeleteGroupsResponseData();
        for (String g : req.groupsNames()) {
            if (g == null || resp.results().find(g) == null) {
                resp.results().add(new DeleteGroupsResponseData.DeletableGroupResult().setGroupId(g).setErrorCode(error.code()));
            }
        }
        return resp;
    }

    static OffsetDeleteResponseData deleteOffsets(Errors error) {
        return new OffsetDeleteResponseData().setErrorCode(error.code());
    }

    /** LeaveGroup v0-2 has no member list: the single member's error moves to the top level. */
    static LeaveGroupResponseData shapeLeave(LeaveGroupResponseData resp, short version) {
        if (version >= 3) {
            return resp;
        }
        List<LeaveGroupResponseData.MemberResponse> members = new ArrayList<>(resp.members());
        resp.setMembers(new ArrayList<>());
        if (resp.errorCode() == Errors.NONE.code() && !members.isEmpty()) {
            resp.setErrorCode(members.get(0).errorCode());
        }
        return resp;
    }

    static List<LeaveGroupRequestData.MemberIdentity> leavingMembers(LeaveGroupRequestData req, short version) {
        if (version >= 3) {
            return req.members();
        }
        return List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(req.memberId()));
    }
}
