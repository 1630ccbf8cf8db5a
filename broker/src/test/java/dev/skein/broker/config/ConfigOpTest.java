package dev.skein.broker.config;

import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The operations of IncrementalAlterConfigs, applied in order to a resource's overrides. */
class ConfigOpTest {
    private static final Map<String, String> CURRENT = Map.of("retention.ms", "1000", "cleanup.policy", "delete");

    @Test
    void setAndDeleteChangeOnlyTheirKeysAndLeaveTheInputAlone() {
        Map<String, String> after = ConfigOp.applyAll(CURRENT, List.of(
                new ConfigOp("segment.ms", ConfigOp.Kind.SET, "60000", null),
                new ConfigOp("retention.ms", ConfigOp.Kind.DELETE, null, null),
                new ConfigOp("absent.key", ConfigOp.Kind.DELETE, null, null)));
        assertThat(after).isEqualTo(Map.of("segment.ms", "60000", "cleanup.policy", "delete"));
        assertThat(CURRENT).containsEntry("retention.ms", "1000");
    }

    @Test
    void appendAndSubtractWorkOnTheOverrideAndNeverRepeatAnElement() {
        Map<String, String> after = ConfigOp.applyAll(CURRENT, List.of(
                new ConfigOp("cleanup.policy", ConfigOp.Kind.APPEND, "compact,delete", "ignored"),
                new ConfigOp("cleanup.policy", ConfigOp.Kind.SUBTRACT, "delete", "ignored")));
        assertThat(after).containsEntry("cleanup.policy", "compact");
    }

    @Test
    void appendWithoutAnOverrideStartsFromTheFallbackAndSubtractCanEmptyTheList() {
        assertThat(ConfigOp.applyAll(Map.of(), List.of(
                new ConfigOp("leader.replication.throttled.replicas", ConfigOp.Kind.APPEND, "0:1, 1:2", ""))))
                .containsEntry("leader.replication.throttled.replicas", "0:1,1:2");
        assertThat(ConfigOp.applyAll(Map.of(), List.of(new ConfigOp("cleanup.policy", ConfigOp.Kind.APPEND, "compact", "delete"))))
                .containsEntry("cleanup.policy", "delete,compact");
        assertThat(ConfigOp.applyAll(Map.of(), List.of(new ConfigOp("cleanup.policy", ConfigOp.Kind.SUBTRACT, "delete", "delete"))))
                .containsEntry("cleanup.policy", "");
    }

    @Test
    void theLaterOfTwoOperationsOnOneKeyWins() {
        assertThat(ConfigOp.applyAll(CURRENT, List.of(
                new ConfigOp("retention.ms", ConfigOp.Kind.DELETE, null, null),
                new ConfigOp("retention.ms", ConfigOp.Kind.SET, "5", null)))).containsEntry("retention.ms", "5");
    }

    @Test
    void anUnknownOperationIsABadRequestAndListOperationsOnScalarResourcesAreRefusedByKey() {
        assertThatThrownBy(() -> ConfigOp.Kind.of((byte) 7)).isInstanceOf(InvalidRequestException.class)
                .hasMessage("Unknown config operation 7");
        assertThatThrownBy(() -> new ConfigOp("leader.replication.throttled.rate", ConfigOp.Kind.APPEND, "5", null).requireScalar())
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("leader.replication.throttled.rate");
        new ConfigOp("leader.replication.throttled.rate", ConfigOp.Kind.SET, "5", null).requireScalar();
    }
}
