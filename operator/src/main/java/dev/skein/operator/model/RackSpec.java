package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/** Rack awareness of a cluster. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RackSpec {
    @Required
    @JsonPropertyDescription("Node label whose value is each broker's broker.rack, e.g. topology.kubernetes.io/zone.")
    private String topologyKey;

    public String getTopologyKey() {
        return topologyKey;
    }

    public void setTopologyKey(String topologyKey) {
        this.topologyKey = topologyKey;
    }
}
