package dev.skein.operator.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;

/** The brokers' PodDisruptionBudget. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PodDisruptionBudgetSpec {
    @Min(0)
    @Default("1")
    @JsonPropertyDescription("How many broker pods a voluntary disruption (node drain) may take at once (default 1).")
    private Integer maxUnavailable;

    public Integer getMaxUnavailable() {
        return maxUnavailable;
    }

    public void setMaxUnavailable(Integer maxUnavailable) {
        this.maxUnavailable = maxUnavailable;
    }
}
