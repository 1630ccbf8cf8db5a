package dev.skein.broker.api;

import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** Metadata, DescribeCluster and DescribeTopicPartitions: what the cluster looks like to a client. */
final class MetadataApi {
    private static final Logger log = LoggerFactory.getLogger(MetadataApi.class);
    private static final int AUTHORIZED_OPERATIONS_OMITTED = Integer.MIN_VALUE;
    /** How long a request naming a topic this broker does not know waits for the controller's latest metadata. */
    static final long CATCH_UP_MS = 1_000;

    private final Controller controller;
    private final BrokerConfig config;

    MetadataApi(Controller controller, BrokerConfig config) {
        this.controller = controller;
        this.config = config;
    }

    MetadataResponseData metadata(MetadataRequestData request, short version) {
        ClusterImage image = controller.image();
        MetadataResponseData response = new MetadataResponseData()
                .setClusterId(image.clusterId())
                .setControllerId(image.controllerId())
                .setClusterAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
        for (ClusterImage.BrokerInfo b : image.brokers()) {
            if (b.fenced()) {
                continue;
            }
            response.brokers().add(new MetadataResponseData.MetadataResponseBroker()
                    .setNodeId(b.id()).setHost(b.host()).setPort(b.port()).setRack(b.rack()));
        }
        if (request.topics() == null) {
            for (TopicMetadata t : image.topics()) {
                response.topics().add(topic(t, image));
            }
            return response;
        }
        boolean allowAutoCreate = version < 4 || request.allowAutoTopicCreation();
        boolean caughtUp = false;
        for (MetadataRequestData.MetadataRequestTopic rt : request.topics()) {
            // a topic asked for by id carries a non-zero id and a name that is null or "" (the
            // field's default, which MetadataRequest.Builder.forTopicIds leaves in place)
            Uuid id = rt.topicId();
            if (id != null && !Uuid.ZERO_UUID.equals(id)) {
                TopicMetadata t = image.topic(id);
                if (t == null && !caughtUp) {
                    image = caughtUp(controller);
                    caughtUp = true;
                    t = image.topic(id);
                }
                response.topics().add(t != null ? topic(t, image)
                        : new MetadataResponseData.MetadataResponseTopic()
                        .setName(version >= 12 ? null : "")
                        .setTopicId(id)
                        .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code())
                        .setTopicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED));
                continue;
            }
            TopicMetadata t = image.topic(rt.name());
            if (t == null && !caughtUp) {
                image = caughtUp(controller);
                caughtUp = true;
                t = image.topic(rt.name());
            }
            if (t == null && allowAutoCreate && config.autoCreateTopicsEnable() && Topic.isValid(rt.name())
                    && !Topic.isInternal(rt.name())) {
                t = autoCreate(rt.name());
                image = controller.image();
            }
            if (t != null) {
                response.topics().add(topic(t, image));
            } else {
                Errors error = Topic.isValid(rt.name()) ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.INVALID_TOPIC_EXCEPTION;
                response.topics().add(new MetadataResponseData.MetadataResponseTopic()
                        .setName(rt.name())
                        .setTopicId(Uuid.ZERO_UUID)
                        .setErrorCode(error.code())
                        .setTopicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED));
            }
        }
        return response;
    }

    /**
     * The image once this broker has caught up with the active controller (waiting at most
     * {@link #CATCH_UP_MS}), for a request that names a topic this broker does not know: the topic
     * may have been created through another broker a moment ago. A broker that cannot reach the
     * controller in time answers from the image it has.
     */
    static ClusterImage caughtUp(Controller controller) {
        try {
            if (!controller.catchUp(CATCH_UP_MS)) {
                log.debug("Could not catch up with the active controller within {} ms", CATCH_UP_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return controller.image();
    }

    private TopicMetadata autoCreate(String name) {
        try {
            return controller.createTopic(name, config.numPartitions(), (short) config.defaultReplicationFactor(),
                    Map.of(), false);
        } catch (TopicExistsException e) {
            return controller.image().topic(name);
        } catch (ApiException e) {
            log.info("Could not auto-create topic {}: {}", name, e.getMessage());
            return null;
        }
    }

    private static MetadataResponseData.MetadataResponseTopic topic(TopicMetadata t, ClusterImage image) {
        MetadataResponseData.MetadataResponseTopic rt = new MetadataResponseData.MetadataResponseTopic()
                .setName(t.name())
                .setTopicId(t.id())
                .setIsInternal(t.isInternal())
                .setTopicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
        for (int p = 0; p < t.partitionCount(); p++) {
            PartitionRegistration r = t.partition(p);
            rt.partitions().add(new MetadataResponseData.MetadataResponsePartition()
                    .setPartitionIndex(p)
                    .setErrorCode((r.hasLeader() ? Errors.NONE : Errors.LEADER_NOT_AVAILABLE).code())
                    .setLeaderId(r.leader())
                    .setLeaderEpoch(r.leaderEpoch())
                    .setReplicaNodes(r.replicas())
                    .setIsrNodes(r.isr())
                    .setOfflineReplicas(offline(r, image)));
        }
        return rt;
    }

    /** Replicas on brokers that are not registered or are fenced. */
    static List<Integer> offline(PartitionRegistration r, ClusterImage image) {
        List<Integer> out = new ArrayList<>();
        for (int b : r.replicas()) {
            if (!image.isLive(b)) {
                out.add(b);
            }
        }
        return out;
    }

    DescribeClusterResponseData describeCluster(DescribeClusterRequestData request, short version) {
        ClusterImage image = controller.image();
        DescribeClusterResponseData response = new DescribeClusterResponseData()
                .setClusterId(image.clusterId())
                .setControllerId(image.controllerId())
                .setEndpointType(request.endpointType())
                .setClusterAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
        if (version >= 1 && request.endpointType() != 1) {
            return response.setErrorCode(Errors.UNSUPPORTED_ENDPOINT_TYPE.code())
                    .setErrorMessage("Skein brokers describe the broker endpoints (type 1) only");
        }
        for (ClusterImage.BrokerInfo b : image.brokers()) {
            if (b.fenced() && !(version >= 2 && request.includeFencedBrokers())) {
                continue;
            }
            response.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker()
                    .setBrokerId(b.id()).setHost(b.host()).setPort(b.port()).setRack(b.rack())
                    .setIsFenced(version >= 2 && b.fenced()));
        }
        return response;
    }

    DescribeTopicPartitionsResponseData describeTopicPartitions(DescribeTopicPartitionsRequestData request) {
        ClusterImage image = controller.image();
        List<String> names = new ArrayList<>();
        if (request.topics().isEmpty()) {
            image.topics().forEach(t -> names.add(t.name()));
        } else {
            request.topics().forEach(t -> names.add(t.name()));
            Collections.sort(names);
            for (String name : names) {
                if (image.topic(name) == null) {
                    image = caughtUp(controller);
                    break;
                }
            }
        }
        DescribeTopicPartitionsRequestData.Cursor cursor = request.cursor();
        int budget = request.responsePartitionLimit();
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsResponseData();
        boolean started = cursor == null;
        for (String name : names) {
            if (!started) {
                if (name.compareTo(cursor.topicName()) < 0) {
                    continue;
                }
                started = true;
            }
            int first = cursor != null && name.equals(cursor.topicName()) ? cursor.partitionIndex() : 0;
            if (budget <= 0) {
                response.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor()
                        .setTopicName(name).setPartitionIndex(first));
                return response;
            }
            TopicMetadata t = image.topic(name);
            if (t == null) {
                response.topics().add(new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic()
                        .setName(name).setTopicId(Uuid.ZERO_UUID)
                        .setErrorCode((Topic.isValid(name) ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.INVALID_TOPIC_EXCEPTION).code())
                        .setTopicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED));
                continue;
            }
            DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic rt =
                    new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic()
                            .setName(name).setTopicId(t.id()).setIsInternal(t.isInternal())
                            .setTopicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
            for (int p = first; p < t.partitionCount(); p++) {
                if (budget <= 0) {
                    response.topics().add(rt);
                    response.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor()
                            .setTopicName(name).setPartitionIndex(p));
                    return response;
                }
                PartitionRegistration r = t.partition(p);
                rt.partitions().add(new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition()
                        .setPartitionIndex(p)
                        .setErrorCode((r.hasLeader() ? Errors.NONE : Errors.LEADER_NOT_AVAILABLE).code())
                        .setLeaderId(r.leader()).setLeaderEpoch(r.leaderEpoch())
                        .setReplicaNodes(r.replicas()).setIsrNodes(r.isr())
                        .setEligibleLeaderReplicas(List.of()).setLastKnownElr(List.of())
                        .setOfflineReplicas(offline(r, image)));
                budget--;
            }
            response.topics().add(rt);
        }
        return response;
    }
}
