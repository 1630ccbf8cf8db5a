package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The observed state of one broker of a {@link SkeinCluster}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BrokerStatus {
    @JsonPropertyDescription("The broker's node.id (its pod's StatefulSet ordinal).")
    private Integer nodeId;

    @JsonPropertyDescription("The broker's pod.")
    private String pod;

    @JsonPropertyDescription("The Kubernetes node the pod runs on.")
    private String node;

    @JsonPropertyDescription("Incarnation id of the broker's log dir; changes when the broker starts on an empty disk.")
    private String incarnation;

    @JsonPropertyDescription("True when the broker is in the ISR of every partition it hosts.")
    private Boolean inAllIsrs;

    public Integer getNodeId() {
        return nodeId;
    }

    public void setNodeId(Integer nodeId) {
        this.nodeId = nodeId;
    }

    public String getPod() {
        return pod;
    }

    public void setPod(String pod) {
        this.pod = pod;
    }

    public String getNode() {
        return node;
    }

    public void setNode(String node) {
        this.node = node;
    }

    public String getIncarnation() {
        return incarnation;
    }

    public void setIncarnation(String incarnation) {
        this.incarnation = incarnation;
    }

    public Boolean getInAllIsrs() {
        return inAllIsrs;
    }

    public void setInAllIsrs(Boolean inAllIsrs) {
        this.inAllIsrs = inAllIsrs;
    }
}
