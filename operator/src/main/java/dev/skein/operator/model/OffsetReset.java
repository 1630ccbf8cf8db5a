package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

import java.util.ArrayList;
import java.util.List;

/** A declarative reset of a consumer group's committed offsets. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.to != 'Timestamp' || has(self.timestamp)",
        message = "spec.offsetReset.timestamp is required when spec.offsetReset.to is Timestamp", fieldPath = ".timestamp",
        reason = "FieldValueRequired")
@ValidationRule(value = "self.to == 'Timestamp' || !has(self.timestamp)",
        message = "spec.offsetReset.timestamp is only allowed when spec.offsetReset.to is Timestamp",
        fieldPath = ".timestamp", reason = "FieldValueForbidden")
@ValidationRule(value = "self.to != 'Offsets' || (has(self.offsets) && size(self.offsets) > 0)",
        message = "spec.offsetReset.offsets must list at least one partition when spec.offsetReset.to is Offsets",
        fieldPath = ".offsets", reason = "FieldValueRequired")
@ValidationRule(value = "self.to == 'Offsets' || !has(self.offsets) || size(self.offsets) == 0",
        message = "spec.offsetReset.offsets is only allowed when spec.offsetReset.to is Offsets",
        fieldPath = ".offsets", reason = "FieldValueForbidden")
public class OffsetReset {
    /** Where to reset to. */
    public enum Target { Earliest, Latest, Timestamp, Offsets }

    @Required
    @JsonPropertyDescription("Earliest, Latest, Timestamp (the first offset at or after timestamp) or Offsets "
            + "(the explicit offsets listed).")
    private Target to;

    @JsonPropertyDescription("RFC 3339 time for to=Timestamp, e.g. 2026-01-31T12:00:00Z.")
    @ValidationRule(value = "self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$')",
            message = "spec.offsetReset.timestamp must be an RFC 3339 time such as 2026-01-31T12:00:00Z")
    @Size(max = 64)
    private String timestamp;

    @Size(max = 1000)
    @JsonPropertyDescription("Topics to reset (all of the group's topics when empty); for Earliest, Latest, Timestamp.")
    private List<String> topics = new ArrayList<>();

    @Size(max = 10000)
    @JsonPropertyDescription("Explicit offsets, for to=Offsets.")
    private List<PartitionOffset> offsets = new ArrayList<>();

    public Target getTo() {
        return to;
    }

    public void setTo(Target to) {
        this.to = to;
    }

    public String getTimestamp() {
        return timestamp;
    }

    public void setTimestamp(String timestamp) {
        this.timestamp = timestamp;
    }

    public List<String> getTopics() {
        return topics;
    }

    public void setTopics(List<String> topics) {
        this.topics = topics;
    }

    public List<PartitionOffset> getOffsets() {
        return offsets;
    }

    public void setOffsets(List<PartitionOffset> offsets) {
        this.offsets = offsets;
    }
}
