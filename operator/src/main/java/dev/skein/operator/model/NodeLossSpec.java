package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;

/** When and how a broker whose node is lost is replaced. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodeLossSpec {
    @Default("true")
    @JsonPropertyDescription("Replace a broker whose node has been lost for timeoutSeconds (default true).")
    private boolean enabled = true;

    @Min(30)
    @Default("300")
    @JsonPropertyDescription("How long a node must be NotReady or gone before its broker is replaced (seconds).")
    private Integer timeoutSeconds;

    @Default("true")
    @JsonPropertyDescription("If the lost broker's volume is node-local, delete its claim so a fresh volume is "
            + "provisioned on another node; the new broker starts empty and re-replicates (throttled).")
    private boolean replaceLocalVolumes = true;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Integer getTimeoutSeconds() {
        return timeoutSeconds;
    }

    public void setTimeoutSeconds(Integer timeoutSeconds) {
        this.timeoutSeconds = timeoutSeconds;
    }

    public boolean isReplaceLocalVolumes() {
        return replaceLocalVolumes;
    }

    public void setReplaceLocalVolumes(boolean replaceLocalVolumes) {
        this.replaceLocalVolumes = replaceLocalVolumes;
    }
}
