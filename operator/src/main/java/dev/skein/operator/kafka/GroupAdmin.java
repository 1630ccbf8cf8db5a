package dev.skein.operator.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The Admin calls the consumer-group reconciler makes, each bounded by the admin timeout. */
public final class GroupAdmin {
    /** A group as the coordinator describes it. */
    public record GroupView(String state, int members) {
    }

    private final Admin admin;
    private final long timeoutMs;

    public GroupAdmin(Admin admin, long timeoutMs) {
        this.admin = admin;
        this.timeoutMs = timeoutMs;
    }

    /** State and member count; a group the coordinator does not know is {@code Dead} with no members. */
    public GroupView describe(String groupId) {
        try {
            ConsumerGroupDescription d = get(admin.describeConsumerGroups(List.of(groupId)).all(),
                    "describe group " + groupId).get(groupId);
            return new GroupView(d.groupState().toString(), d.members().size());
        } catch (KafkaCallException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return new GroupView("Dead", 0);
            }
            throw e;
        }
    }

    /** The group's committed offsets. */
    public Map<TopicPartition, Long> committed(String groupId) {
        Map<TopicPartition, OffsetAndMetadata> offsets = get(admin.listConsumerGroupOffsets(groupId)
                .partitionsToOffsetAndMetadata(), "list the offsets of group " + groupId);
        Map<TopicPartition, Long> out = new HashMap<>();
        offsets.forEach((tp, om) -> {
            if (om != null) {
                out.put(tp, om.offset());
            }
        });
        return out;
    }

    /** The offset of each partition for the spec (earliest, latest, for a timestamp); -1 where none. */
    public Map<TopicPartition, Long> offsets(Collection<TopicPartition> partitions, OffsetSpec spec) {
        if (partitions.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        partitions.forEach(tp -> request.put(tp, spec));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> result = get(admin.listOffsets(request).all(),
                "list offsets");
        Map<TopicPartition, Long> out = new HashMap<>();
        result.forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    /** Partition count of each topic. */
    public Map<String, Integer> partitionCounts(Collection<String> topics) {
        if (topics.isEmpty()) {
            return Map.of();
        }
        Map<String, TopicDescription> d = get(admin.describeTopics(Set.copyOf(topics)).allTopicNames(), "describe topics");
        Map<String, Integer> out = new HashMap<>();
        d.forEach((name, t) -> out.put(name, t.partitions().size()));
        return out;
    }

    public void alterOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        Map<TopicPartition, OffsetAndMetadata> request = new HashMap<>();
        offsets.forEach((tp, o) -> request.put(tp, new OffsetAndMetadata(o)));
        get(admin.alterConsumerGroupOffsets(groupId, request).all(), "reset the offsets of group " + groupId);
    }

    public void delete(String groupId) {
        get(admin.deleteConsumerGroups(List.of(groupId)).all(), "delete group " + groupId);
    }

    private <T> T get(KafkaFuture<T> future, String what) {
        return KafkaCallException.await(future, timeoutMs, what);
    }
}
