package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Committed offset and lag of one partition of a consumer group. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PartitionLag {
    @JsonPropertyDescription("Topic name.")
    private String topic;

    @JsonPropertyDescription("Partition number.")
    private Integer partition;

    @JsonPropertyDescription("The group's committed offset.")
    private Long committedOffset;

    @JsonPropertyDescription("The partition's log end offset (high watermark).")
    private Long logEndOffset;

    @JsonPropertyDescription("logEndOffset - committedOffset.")
    private Long lag;

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

    public Long getCommittedOffset() {
        return committedOffset;
    }

    public void setCommittedOffset(Long committedOffset) {
        this.committedOffset = committedOffset;
    }

    public Long getLogEndOffset() {
        return logEndOffset;
    }

    public void setLogEndOffset(Long logEndOffset) {
        this.logEndOffset = logEndOffset;
    }

    public Long getLag() {
        return lag;
    }

    public void setLag(Long lag) {
        this.lag = lag;
    }
}
