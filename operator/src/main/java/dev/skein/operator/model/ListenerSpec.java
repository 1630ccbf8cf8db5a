package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** A client listener of every broker. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!(self.name in ['PLAINTEXT', 'CONTROLLER'])",
        message = "spec.listeners name PLAINTEXT and CONTROLLER are the operator's own listeners", fieldPath = ".name")
@ValidationRule(value = "!(self.port in [9092, 9093, 8080])",
        message = "spec.listeners port 9092, 9093 and 8080 are the brokers' own ports (client, controller, HTTP)",
        fieldPath = ".port")
public class ListenerSpec {
    @Required
    @Pattern("^[A-Z][A-Z0-9_]{0,24}$")
    @Size(min = 1, max = 25)
    @JsonPropertyDescription("Listener name as in Kafka's listeners config (upper case, e.g. CLIENT). "
            + "PLAINTEXT (port 9092, replication and in-cluster clients) and CONTROLLER (9093) are the operator's.")
    private String name;

    @Required
    @Min(1024)
    @Max(65535)
    @JsonPropertyDescription("Container port of the listener on every broker; not 9092, 9093 or 8080.")
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
