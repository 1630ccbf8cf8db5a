package dev.skein.e2e.kubelet;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class PodRuntimeTest {

    @Test
    void expansionSubstitutesDefinedVariablesKeepsUnknownOnesAndUnescapesDollars() {
        Map<String, String> env = Map.of("POD_NAME", "peer-0", "NS", "default");

        assertThat(PodRuntime.expand("$(POD_NAME).svc.$(NS)", env)).isEqualTo("peer-0.svc.default");
        assertThat(PodRuntime.expand("$(UNKNOWN)-$(POD_NAME)", env)).isEqualTo("$(UNKNOWN)-peer-0");
        assertThat(PodRuntime.expand("$$(POD_NAME) costs $$5", env)).isEqualTo("$(POD_NAME) costs $5");
    }

    @Test
    void shellQuotingSurvivesSingleQuotes() {
        assertThat(PodRuntime.quote("/data/it's here")).isEqualTo("'/data/it'\\''s here'");
    }
}
