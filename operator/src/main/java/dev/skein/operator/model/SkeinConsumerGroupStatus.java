package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;

import java.util.ArrayList;
import java.util.List;

/** The observed state of a {@link SkeinConsumerGroup}, written only by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SkeinConsumerGroupStatus {
    @JsonPropertyDescription("Ready, and OffsetReset (False with reason WaitingForInactiveGroup while members are active).")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("The metadata.generation the status was computed from.")
    private Long observedGeneration;

    @JsonPropertyDescription("The Kafka group.id.")
    private String groupId;

    @JsonPropertyDescription("Group state as the coordinator reports it (Empty, Stable, PreparingRebalance, ...).")
    private String state;

    @JsonPropertyDescription("Number of active members.")
    private Integer members;

    @JsonPropertyDescription("Committed offset, log end offset and lag of each partition the group has offsets for.")
    private List<PartitionLag> offsets = new ArrayList<>();

    @JsonPropertyDescription("Sum of the lag of every partition.")
    private Long totalLag;

    @JsonPropertyDescription("Fingerprint of the spec.offsetReset last applied: a reset is applied once per "
            + "change of that field.")
    private String appliedOffsetReset;

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

    public String getGroupId() {
        return groupId;
    }

    public void setGroupId(String groupId) {
        this.groupId = groupId;
    }

    public String getState() {
        return state;
    }

    public void setState(String state) {
        this.state = state;
    }

    public Integer getMembers() {
        return members;
    }

    public void setMembers(Integer members) {
        this.members = members;
    }

    public List<PartitionLag> getOffsets() {
        return offsets;
    }

    public void setOffsets(List<PartitionLag> offsets) {
        this.offsets = offsets;
    }

    public Long getTotalLag() {
        return totalLag;
    }

    public void setTotalLag(Long totalLag) {
        this.totalLag = totalLag;
    }

    public String getAppliedOffsetReset() {
        return appliedOffsetReset;
    }

    public void setAppliedOffsetReset(String appliedOffsetReset) {
        this.appliedOffsetReset = appliedOffsetReset;
    }
}
