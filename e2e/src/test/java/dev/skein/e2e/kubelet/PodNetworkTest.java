package dev.skein.e2e.kubelet;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PodNetworkTest {

    @Test
    void theNetworkIdIsADigitAndDefaultsToZero() {
        assertThat(PodNetwork.netId(null)).isZero();
        assertThat(PodNetwork.netId(" ")).isZero();
        assertThat(PodNetwork.netId("7")).isEqualTo(7);
        assertThatThrownBy(() -> PodNetwork.netId("10")).hasMessageContaining("SKEIN_E2E_NET must be a number from 0 to 9, not '10'");
        assertThatThrownBy(() -> PodNetwork.netId("a")).hasMessageContaining("not 'a'");
    }
}
