package dev.skein.broker.controller.raft;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.controller.MetadataCodec;
import dev.skein.broker.controller.MetadataState;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * IncrementalAlterConfigs goes to the active controller as operations; an active controller of an
 * older version, which refuses the request type by name, gets the overrides this node computes.
 */
class ForwardingControllerTest {
    private static final TopicMetadata TOPIC = new TopicMetadata("t", Uuid.randomUuid(), List.of(),
            Map.of("retention.ms", "1000"));
    private static final List<ConfigOp> OPS = List.of(new ConfigOp("segment.ms", ConfigOp.Kind.SET, "5000", null));

    @Test
    void theOperationsGoToTheActiveControllerAsTheyAre() {
        Recording c = new Recording(false);
        assertThat(c.incrementalAlterTopicConfigs("t", OPS, false).name()).isEqualTo("t");
        assertThat(c.sent).containsExactly(new ControllerRequest.IncrementalAlterTopicConfigs("t", OPS, false));
    }

    @Test
    void anOlderActiveControllerGetsTheOverridesThisNodeComputes() {
        Recording c = new Recording(true);
        c.incrementalAlterTopicConfigs("t", OPS, true);
        assertThat(c.sent).containsExactly(new ControllerRequest.IncrementalAlterTopicConfigs("t", OPS, true),
                new ControllerRequest.AlterTopicConfigs("t", Map.of("retention.ms", "1000", "segment.ms", "5000"), true));

        c.sent.clear();
        c.incrementalAlterBrokerConfigs("", OPS, false);
        assertThat(c.sent).containsExactly(new ControllerRequest.IncrementalAlterBrokerConfigs("", OPS, false),
                new ControllerRequest.AlterBrokerConfigs("", Map.of("segment.ms", "5000"), false));
    }

    @Test
    void anyOtherRefusalIsTheCallersToSee() {
        Recording c = new Recording(false) {
            @Override
            ControllerReply call(ControllerRequest request) {
                sent.add(request);
                return ControllerReply.error(new InvalidConfigurationException("Invalid value x for segment.ms"), 3)
                        .throwIfError();
            }
        };
        assertThatThrownBy(() -> c.incrementalAlterTopicConfigs("t", OPS, false))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("segment.ms");
        assertThat(c.sent).hasSize(1);
    }

    /** Answers as an active controller would, or, {@code old}, refuses the incremental types as one of an earlier version. */
    private static class Recording extends ForwardingController {
        final List<ControllerRequest> sent = new ArrayList<>();
        private final boolean old;

        Recording(boolean old) {
            this.old = old;
        }

        @Override
        ControllerReply call(ControllerRequest request) {
            sent.add(request);
            if (old && (request instanceof ControllerRequest.IncrementalAlterTopicConfigs
                    || request instanceof ControllerRequest.IncrementalAlterBrokerConfigs)) {
                // what an older controller answers: its decoder's error, as ControllerReply carries it
                return ControllerReply.error(new UncheckedIOException(new IOException("Unknown controller request type 26")), 7)
                        .throwIfError();
            }
            return ControllerReply.ok(0, 8, MetadataCodec.encodeState(new MetadataState(Map.of(), Map.of("t", TOPIC), 0)));
        }

        @Override
        public ClusterImage image() {
            return new ClusterImage("c", 0, List.of(), List.of(TOPIC));
        }

        @Override
        public void addListener(Consumer<ClusterImage> listener) {
        }

        @Override
        public void close() {
        }
    }
}
