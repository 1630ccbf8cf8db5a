package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

import java.util.LinkedHashMap;
import java.util.Map;

/** The desired state of a {@link SkeinTopic}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!has(self.minInSyncReplicas) || self.minInSyncReplicas <= self.replicationFactor",
        message = "spec.minInSyncReplicas must not exceed spec.replicationFactor",
        fieldPath = ".minInSyncReplicas", reason = "FieldValueInvalid")
@ValidationRule(value = "(has(self.topicName) ? self.topicName : '') == (has(oldSelf.topicName) ? oldSelf.topicName : '')",
        message = "spec.topicName is immutable: create a new SkeinTopic for another topic",
        fieldPath = ".topicName", reason = "FieldValueForbidden")
@ValidationRule(value = "!has(self.config) || !('min.insync.replicas' in self.config)",
        message = "spec.config must not set min.insync.replicas: use spec.minInSyncReplicas",
        fieldPath = ".config", reason = "FieldValueForbidden")
public class SkeinTopicSpec {
    @Required
    @Size(min = 1, max = 253)
    @ValidationRule(value = "self == oldSelf", message = "spec.cluster is immutable: a topic cannot move to another cluster",
            reason = "FieldValueForbidden")
    @JsonPropertyDescription("Name of the SkeinCluster, in this namespace, that holds the topic. Immutable.")
    private String cluster;

    @Size(min = 1, max = 249)
    @Pattern("^[a-zA-Z0-9._-]+$")
    @ValidationRule(value = "self != '.' && self != '..'", message = "spec.topicName must not be '.' or '..'")
    @JsonPropertyDescription("Name of the Kafka topic; defaults to the resource's name. Letters, digits, '.', '_' "
            + "and '-', at most 249 characters. Immutable.")
    private String topicName;

    @Required
    @Min(1)
    @Max(100000)
    @JsonPropertyDescription("Number of partitions. May be increased; a decrease is refused (condition "
            + "Ready=False, reason NotSupported) and never applied.")
    private Integer partitions;

    @Required
    @Min(1)
    @Max(32767)
    @JsonPropertyDescription("Number of replicas of each partition; at most the cluster's broker count.")
    private Integer replicationFactor;

    @Min(1)
    @Max(32767)
    @JsonPropertyDescription("The topic's min.insync.replicas: acks=all writes fail when fewer replicas are in "
            + "sync. At most replicationFactor. Unset: the cluster's default.")
    private Integer minInSyncReplicas;

    @JsonPropertyDescription("Other topic configs by their Kafka names (retention.ms, cleanup.policy, ...), "
            + "applied with IncrementalAlterConfigs. Configs not listed keep the cluster's defaults.")
    @Size(max = 256)
    private Map<String, String> config = new LinkedHashMap<>();

    @Default("Retain")
    @JsonPropertyDescription("What deleting this resource does to the topic: Delete deletes the topic and its "
            + "data; Retain (the default) leaves the topic in the cluster.")
    private DeletionPolicy deletionPolicy;

    public String getCluster() {
        return cluster;
    }

    public void setCluster(String cluster) {
        this.cluster = cluster;
    }

    public String getTopicName() {
        return topicName;
    }

    public void setTopicName(String topicName) {
        this.topicName = topicName;
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

    public Integer getMinInSyncReplicas() {
        return minInSyncReplicas;
    }

    public void setMinInSyncReplicas(Integer minInSyncReplicas) {
        this.minInSyncReplicas = minInSyncReplicas;
    }

    public Map<String, String> getConfig() {
        return config;
    }

    public void setConfig(Map<String, String> config) {
        this.config = config;
    }

    public DeletionPolicy getDeletionPolicy() {
        return deletionPolicy;
    }

    public void setDeletionPolicy(DeletionPolicy deletionPolicy) {
        this.deletionPolicy = deletionPolicy;
    }
}
