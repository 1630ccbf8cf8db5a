package dev.skein.broker.api;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.coordinator.GroupCoordinator;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.network.RequestContext;
import dev.skein.broker.network.RequestHandler;
import dev.skein.broker.network.Response;
import dev.skein.broker.server.ReplicaManager;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.DescribeQuorumRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;

import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * The request dispatcher: one method per API, each a thin adapter from the decoded request to the
 * component that owns the state (replica manager, controller, group coordinator). Runs on the
 * request-handler pool.
 */
public final class KafkaApis implements RequestHandler {
    private final Controller controller;
    private final GroupCoordinator coordinator;
    private final ProduceApi produce;
    private final FetchApi fetch;
    private final MetadataApi metadata;
    private final TopicAdminApi topics;
    private final ConfigsApi configs;
    private final OffsetsApi offsets;
    private final GroupApi groups;
    private final ReassignmentApi reassignments;
    private final QuorumApi quorum;

    public KafkaApis(BrokerConfig config, Controller controller, ReplicaManager replicaManager, GroupCoordinator coordinator) {
        this(config, controller, replicaManager, coordinator, Time.SYSTEM, new Random());
    }

    /** With the clock and the randomness (fetch session ids) of the broker. */
    public KafkaApis(BrokerConfig config, Controller controller, ReplicaManager replicaManager, GroupCoordinator coordinator,
                     Time time, Random random) {
        this.controller = controller;
        this.coordinator = coordinator;
        this.produce = new ProduceApi(replicaManager);
        this.fetch = new FetchApi(replicaManager, new FetchSessions(config.maxIncrementalFetchSessionCacheSlots(),
                FetchApi.SESSION_EVICTION_MS, time, random));
        this.metadata = new MetadataApi(controller, config);
        this.configs = new ConfigsApi(controller, config);
        this.topics = new TopicAdminApi(controller, config, configs, coordinator);
        this.offsets = new OffsetsApi(replicaManager);
        this.groups = new GroupApi();
        this.reassignments = new ReassignmentApi(controller);
        this.quorum = new QuorumApi(controller, config);
    }

    /** The incremental fetch sessions open on this broker. */
    public int fetchSessionCount() {
        return fetch.sessionCount();
    }

    /** The client's address as Kafka reports a member's host ("/127.0.0.1"); built for JoinGroup only, not per request. */
    private static String clientHost(RequestContext ctx) {
        return ctx.clientAddress() == null ? "" : "/" + ctx.clientAddress().getHostAddress();
    }

    @Override
    public CompletableFuture<Response> handle(RequestContext ctx, AbstractRequest request) {
        short v = ctx.apiVersion();
        ApiKeys api = request.apiKey();
        if (!SupportedApis.isSupported(api, v)) {
            return reply(request.getErrorResponse(0, new UnsupportedVersionException(
                    api + " v" + v + " is not supported by this broker")).data());
        }
        // Produce and fetch, nearly every request, are dispatched here and the rest in a method of its own. The JIT
        // compiles a switch with only the cases it has seen and recompiles the whole method when another comes; a
        // consumer's first group and offset requests then recompiled this method with every handler inlined (over
        // 100 KB of code a broker) during the catch-up read.
        if (api == ApiKeys.FETCH) {
            return fetch.handle((FetchRequest) request, v, controller.image());
        }
        if (api == ApiKeys.PRODUCE) {
            return produce.handle((ProduceRequest) request, v, controller.image());
        }
        return handleOther(ctx, request, api, v);
    }

    private CompletableFuture<Response> handleOther(RequestContext ctx, AbstractRequest request, ApiKeys api, short v) {
        ClusterImage image = controller.image();
        return switch (api) {
            case API_VERSIONS -> reply(SupportedApis.response());
            case METADATA -> reply(metadata.metadata(((MetadataRequest) request).data(), v));
            case LIST_OFFSETS -> reply(offsets.listOffsets(((ListOffsetsRequest) request).data(), v, image));
            case OFFSET_FOR_LEADER_EPOCH -> reply(offsets.offsetForLeaderEpoch(((OffsetsForLeaderEpochRequest) request).data(), image));
            case DELETE_RECORDS -> reply(offsets.deleteRecords(((DeleteRecordsRequest) request).data(), image));
            case CREATE_TOPICS -> reply(topics.createTopics(((CreateTopicsRequest) request).data(), v));
            case DELETE_TOPICS -> reply(topics.deleteTopics(((DeleteTopicsRequest) request).data(), v));
            case CREATE_PARTITIONS -> reply(topics.createPartitions(((CreatePartitionsRequest) request).data()));
            case DESCRIBE_TOPIC_PARTITIONS -> reply(metadata.describeTopicPartitions(((DescribeTopicPartitionsRequest) request).data()));
            case DESCRIBE_CLUSTER -> reply(metadata.describeCluster(((DescribeClusterRequest) request).data(), v));
            case DESCRIBE_CONFIGS -> reply(configs.describe(((DescribeConfigsRequest) request).data(), v));
            case ALTER_CONFIGS -> reply(configs.alter(((AlterConfigsRequest) request).data()));
            case INCREMENTAL_ALTER_CONFIGS -> reply(configs.incrementalAlter(((IncrementalAlterConfigsRequest) request).data()));
            case ALTER_PARTITION_REASSIGNMENTS -> reply(reassignments.alter(
                    ((AlterPartitionReassignmentsRequest) request).data(), v));
            case LIST_PARTITION_REASSIGNMENTS -> reply(reassignments.list(
                    ((ListPartitionReassignmentsRequest) request).data()));
            case ELECT_LEADERS -> reply(reassignments.electLeaders(((ElectLeadersRequest) request).data(), v));
            case DESCRIBE_QUORUM -> reply(quorum.describe(((DescribeQuorumRequest) request).data()));
            case INIT_PRODUCER_ID -> reply(initProducerId(((InitProducerIdRequest) request).data()));
            case FIND_COORDINATOR -> reply(groups.findCoordinator(((FindCoordinatorRequest) request).data(), v, image));
            case JOIN_GROUP -> map(coordinator.joinGroup(((JoinGroupRequest) request).data(), v, ctx.clientId(), clientHost(ctx)));
            case SYNC_GROUP -> map(coordinator.syncGroup(((SyncGroupRequest) request).data(), v));
            case HEARTBEAT -> map(coordinator.heartbeat(((HeartbeatRequest) request).data(), v));
            case LEAVE_GROUP -> map(coordinator.leaveGroup(((LeaveGroupRequest) request).data(), v));
            case OFFSET_COMMIT -> map(coordinator.commitOffsets(((OffsetCommitRequest) request).data(), v));
            case OFFSET_FETCH -> map(coordinator.fetchOffsets(((OffsetFetchRequest) request).data(), v));
            case LIST_GROUPS -> map(coordinator.listGroups(((ListGroupsRequest) request).data(), v));
            case DESCRIBE_GROUPS -> map(coordinator.describeGroups(((DescribeGroupsRequest) request).data(), v));
            case DELETE_GROUPS -> map(coordinator.deleteGroups(((DeleteGroupsRequest) request).data(), v));
            case OFFSET_DELETE -> map(coordinator.deleteOffsets(((OffsetDeleteRequest) request).data(), v));
            default -> reply(request.getErrorResponse(0, new UnsupportedVersionException(
                    api + " is not supported by this broker")).data());
        };
    }

    private InitProducerIdResponseData initProducerId(InitProducerIdRequestData data) {
        InitProducerIdResponseData response = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
        try {
            if (data.transactionalId() != null) {
                throw new InvalidRequestException("Skein does not support transactions yet (transactional.id "
                        + data.transactionalId() + ")");
            }
            // As in Kafka, a request without a transactional id always gets a new producer id, also when
            // it carries its old id and epoch (KIP-360): the new id starts its sequences afresh.
            return response.setProducerId(controller.allocateProducerId()).setProducerEpoch((short) 0);
        } catch (ApiException e) {
            ApiError error = ApiError.fromThrowable(e);
            return response.setErrorCode(error.error().code());
        }
    }

    private static CompletableFuture<Response> reply(ApiMessage message) {
        return CompletableFuture.completedFuture(Response.reply(message));
    }

    private static CompletableFuture<Response> map(CompletableFuture<? extends ApiMessage> future) {
        return future.thenApply(Response::reply);
    }
}
