package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/** Rack awareness of a cluster. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RackSpec {
    /** The node labels Kubernetes (1.35+, PodTopologyLabels) copies onto a pod when it is scheduled. */
    public static final String ZONE = "topology.kubernetes.io/zone";
    public static final String REGION = "topology.kubernetes.io/region";

    @Required
    @JsonPropertyDescription("Node label whose value is each broker's broker.rack: topology.kubernetes.io/zone or "
            + "topology.kubernetes.io/region (the labels Kubernetes copies onto a pod when it is scheduled, where the "
            + "broker reads them). Brokers are also spread over its values.")
    @ValidationRule(value = "self == 'topology.kubernetes.io/zone' || self == 'topology.kubernetes.io/region'",
            message = "spec.rack.topologyKey must be topology.kubernetes.io/zone or topology.kubernetes.io/region: "
                    + "Kubernetes copies only these node labels onto the broker's pod")
    private String topologyKey;

    public String getTopologyKey() {
        return topologyKey;
    }

    public void setTopologyKey(String topologyKey) {
        this.topologyKey = topologyKey;
    }
}
