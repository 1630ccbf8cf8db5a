package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A client listener of every broker. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ListenerSpec {
    @Required
    @Pattern("^[A-Z][A-Z0-9_]{0,24}$")
    @Size(min = 1, max = 25)
    @JsonPropertyDescription("Listener name as in Kafka's listeners config (upper case, e.g. CLIENT). "
            + "INTERNAL and CONTROLLER are reserved.")
    private String name;

    @Required
    @Min(1024)
    @Max(65535)
    @JsonPropertyDescription("Container port of the listener on every broker.")
    private Integer port;

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Integer getPort() {
        return port;
    }

    public void setPort(Integer port) {
        this.port = port;
    }
}
