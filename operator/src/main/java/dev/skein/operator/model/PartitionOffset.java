package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/** An offset of one partition. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PartitionOffset {
    @Required
    @JsonPropertyDescription("Topic name.")
    private String topic;

    @Required
    @Min(0)
    @JsonPropertyDescription("Partition number.")
    private Integer partition;

    @Required
    @Min(0)
    @JsonPropertyDescription("Offset of the next record to consume.")
    private Long offset;

    public String getTopic() {
        return topic;
    }

    public void setTopic(String topic) {
        this.topic = topic;
    }

    public Integer getPartition() {
        return partition;
    }

    public void setPartition(Integer partition) {
        this.partition = partition;
    }

    public Long getOffset() {
        return offset;
    }

    public void setOffset(Long offset) {
        this.offset = offset;
    }
}
