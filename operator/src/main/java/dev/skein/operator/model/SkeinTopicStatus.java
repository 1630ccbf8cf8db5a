package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;

import java.util.ArrayList;
import java.util.List;

/** The observed state of a {@link SkeinTopic}, written only by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SkeinTopicStatus {
    @JsonPropertyDescription("Ready: True when the topic matches the spec; False with a reason (Creating, "
            + "NotSupported, ClusterNotFound, InvalidSpec, ExistingTopicMismatch, ResourceConflict, KafkaError, ...) and a message saying what is wrong.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("The metadata.generation the status was computed from.")
    private Long observedGeneration;

    @JsonPropertyDescription("The name of the Kafka topic this resource manages.")
    private String topicName;

    @JsonPropertyDescription("The Kafka topic id (base64 UUID), once the topic exists.")
    private String topicId;

    @JsonPropertyDescription("Number of partitions the topic has in the cluster.")
    private Integer partitions;

    @JsonPropertyDescription("Replication factor of the topic in the cluster (replicas of its first partition).")
    private Integer replicationFactor;

    @JsonPropertyDescription("Partitions whose in-sync replica set is smaller than their replica set.")
    private Integer underReplicatedPartitions;

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public String getTopicName() {
        return topicName;
    }

    public void setTopicName(String topicName) {
        this.topicName = topicName;
    }

    public String getTopicId() {
        return topicId;
    }

    public void setTopicId(String topicId) {
        this.topicId = topicId;
    }

    public Integer getPartitions() {
        return partitions;
    }

    public void setPartitions(Integer partitions) {
        this.partitions = partitions;
    }

    public Integer getReplicationFactor() {
        return replicationFactor;
    }

    public void setReplicationFactor(Integer replicationFactor) {
        this.replicationFactor = replicationFactor;
    }

    public Integer getUnderReplicatedPartitions() {
        return underReplicatedPartitions;
    }

    public void setUnderReplicatedPartitions(Integer underReplicatedPartitions) {
        this.underReplicatedPartitions = underReplicatedPartitions;
    }
}
