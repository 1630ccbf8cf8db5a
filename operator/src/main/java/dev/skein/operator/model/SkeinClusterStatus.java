package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;

import java.util.ArrayList;
import java.util.List;

/** The observed state of a {@link SkeinCluster}, written only by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SkeinClusterStatus {
    @JsonPropertyDescription("Ready, Progressing and Degraded, each with a typed reason and a message.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("The metadata.generation the status was computed from.")
    private Long observedGeneration;

    @JsonPropertyDescription("Brokers whose pod is Ready.")
    private Integer readyBrokers;

    @JsonPropertyDescription("State of each broker.")
    private List<BrokerStatus> brokers = new ArrayList<>();

    @JsonPropertyDescription("Node id of the active controller (the controller quorum's leader).")
    private Integer activeController;

    @JsonPropertyDescription("Partitions whose ISR is smaller than their replica set.")
    private Integer underReplicatedPartitions;

    @JsonPropertyDescription("Partitions without a leader.")
    private Integer offlinePartitions;

    @JsonPropertyDescription("Bootstrap servers for clients inside the Kubernetes cluster (host:port,...).")
    private String bootstrapServers;

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

    public Integer getReadyBrokers() {
        return readyBrokers;
    }

    public void setReadyBrokers(Integer readyBrokers) {
        this.readyBrokers = readyBrokers;
    }

    public List<BrokerStatus> getBrokers() {
        return brokers;
    }

    public void setBrokers(List<BrokerStatus> brokers) {
        this.brokers = brokers;
    }

    public Integer getActiveController() {
        return activeController;
    }

    public void setActiveController(Integer activeController) {
        this.activeController = activeController;
    }

    public Integer getUnderReplicatedPartitions() {
        return underReplicatedPartitions;
    }

    public void setUnderReplicatedPartitions(Integer underReplicatedPartitions) {
        this.underReplicatedPartitions = underReplicatedPartitions;
    }

    public Integer getOfflinePartitions() {
        return offlinePartitions;
    }

    public void setOfflinePartitions(Integer offlinePartitions) {
        this.offlinePartitions = offlinePartitions;
    }

    public String getBootstrapServers() {
        return bootstrapServers;
    }

    public void setBootstrapServers(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }
}
