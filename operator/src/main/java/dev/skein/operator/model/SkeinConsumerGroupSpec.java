package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** The desired state of a {@link SkeinConsumerGroup}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "(has(self.groupId) ? self.groupId : '') == (has(oldSelf.groupId) ? oldSelf.groupId : '')",
        message = "spec.groupId is immutable: create a new SkeinConsumerGroup for another group",
        fieldPath = ".groupId", reason = "FieldValueForbidden")
public class SkeinConsumerGroupSpec {
    @Required
    @Size(min = 1, max = 253)
    @ValidationRule(value = "self == oldSelf", message = "spec.cluster is immutable", reason = "FieldValueForbidden")
    @JsonPropertyDescription("Name of the SkeinCluster, in this namespace, the group belongs to. Immutable.")
    private String cluster;

    @Size(min = 1, max = 255)
    @JsonPropertyDescription("The Kafka group.id; defaults to the resource's name. Immutable.")
    private String groupId;

    @JsonPropertyDescription("A reset of the group's committed offsets, applied once per change of this field and "
            + "only while the group has no active members (the status says when it waits).")
    private OffsetReset offsetReset;

    @Default("Retain")
    @JsonPropertyDescription("What deleting this resource does to the group: Delete deletes its committed offsets "
            + "(only when it has no members); Retain (the default) leaves them.")
    private DeletionPolicy deletionPolicy;

    public String getCluster() {
        return cluster;
    }

    public void setCluster(String cluster) {
        this.cluster = cluster;
    }

    public String getGroupId() {
        return groupId;
    }

    public void setGroupId(String groupId) {
        this.groupId = groupId;
    }

    public OffsetReset getOffsetReset() {
        return offsetReset;
    }

    public void setOffsetReset(OffsetReset offsetReset) {
        this.offsetReset = offsetReset;
    }

    public DeletionPolicy getDeletionPolicy() {
        return deletionPolicy;
    }

    public void setDeletionPolicy(DeletionPolicy deletionPolicy) {
        this.deletionPolicy = deletionPolicy;
    }
}
