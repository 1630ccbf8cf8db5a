package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Toleration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Scheduling settings of the broker pods. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PodTemplateSpec {
    @JsonPropertyDescription("Affinity of the broker pods (the operator adds none of its own).")
    private Affinity affinity;

    @JsonPropertyDescription("Tolerations of the broker pods.")
    private List<Toleration> tolerations = new ArrayList<>();

    @JsonPropertyDescription("Node selector of the broker pods.")
    private Map<String, String> nodeSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("PriorityClass of the broker pods.")
    private String priorityClassName;

    public Affinity getAffinity() {
        return affinity;
    }

    public void setAffinity(Affinity affinity) {
        this.affinity = affinity;
    }

    public List<Toleration> getTolerations() {
        return tolerations;
    }

    public void setTolerations(List<Toleration> tolerations) {
        this.tolerations = tolerations;
    }

    public Map<String, String> getNodeSelector() {
        return nodeSelector;
    }

    public void setNodeSelector(Map<String, String> nodeSelector) {
        this.nodeSelector = nodeSelector;
    }

    public String getPriorityClassName() {
        return priorityClassName;
    }

    public void setPriorityClassName(String priorityClassName) {
        this.priorityClassName = priorityClassName;
    }
}
