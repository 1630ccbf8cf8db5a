package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class BrokerLifecycleTest {
    private static final long SESSION_MS = 3_000;

    private final ManualTime time = new ManualTime(1_000_000);
    /** What the controller does with the next heartbeat: answer (null) or throw this. */
    private final AtomicReference<RuntimeException> nextFailure = new AtomicReference<>();
    private final Controller controller = (Controller) Proxy.newProxyInstance(Controller.class.getClassLoader(),
            new Class<?>[]{Controller.class}, (proxy, method, args) -> switch (method.getName()) {
                case "registerBroker" -> 7L;
                // this broker's metadata includes its registration at once
                case "awaitMetadata" -> true;
                case "heartbeat" -> {
                    RuntimeException failure = nextFailure.get();
                    if (failure != null) {
                        throw failure;
                    }
                    yield new BrokerHeartbeat(false, false);
                }
                default -> throw new UnsupportedOperationException(method.getName());
            });
    private final BrokerLifecycle lifecycle = new BrokerLifecycle(controller,
            new ClusterImage.BrokerInfo(1, "127.0.0.1", 9092, null, Uuid.randomUuid(), true), 250, 1_000, time, SESSION_MS);

    @Test
    void brokerIsOutOfTouchOnlyAfterTheSessionTimeoutWithoutAnAnsweredHeartbeat() {
        assertThat(lifecycle.outOfTouch(time.milliseconds())).as("before the first answer").isFalse();
        lifecycle.heartbeat();
        assertThat(lifecycle.outOfTouch(time.milliseconds())).isFalse();

        nextFailure.set(new NotControllerException("No active controller answered within 5000 ms"));
        time.advance(SESSION_MS);
        lifecycle.heartbeat();
        assertThat(lifecycle.outOfTouch(time.milliseconds())).as("exactly the session timeout").isFalse();
        time.advance(1);
        assertThat(lifecycle.outOfTouch(time.milliseconds())).isTrue();

        nextFailure.set(null);
        lifecycle.heartbeat();
        assertThat(lifecycle.outOfTouch(time.milliseconds())).as("answered again").isFalse();
    }

    @Test
    void aSlowHeartbeatThatIsStillInFlightDoesNotCountAsFailed() {
        lifecycle.heartbeat();
        time.advance(SESSION_MS + 1);
        assertThat(lifecycle.outOfTouch(time.milliseconds())).isFalse();
    }

    @Test
    void aControllerThatAnswersWithAnErrorIsInTouch() {
        lifecycle.heartbeat();
        nextFailure.set(new StaleBrokerEpochException("Broker 1 is at epoch 9, not 7"));
        time.advance(SESSION_MS + 1);
        lifecycle.heartbeat();
        assertThat(lifecycle.outOfTouch(time.milliseconds())).isFalse();
    }

    @Test
    void aBrokerHeartbeatsAndServesOnlyOnceItsMetadataIncludesItsRegistration() {
        AtomicBoolean metadataCaughtUp = new AtomicBoolean();
        AtomicInteger heartbeats = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        Controller lagging = (Controller) Proxy.newProxyInstance(Controller.class.getClassLoader(),
                new Class<?>[]{Controller.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "registerBroker" -> 7L;
                    case "awaitMetadata" -> metadataCaughtUp.get() && (Long) args[0] == 7L;
                    case "heartbeat" -> {
                        heartbeats.incrementAndGet();
                        yield new BrokerHeartbeat(false, false);
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        BrokerLifecycle restarted = new BrokerLifecycle(lagging,
                new ClusterImage.BrokerInfo(1, "127.0.0.1", 9092, null, Uuid.randomUuid(), true), 250, 1_000,
                served::incrementAndGet, time, SESSION_MS);

        restarted.heartbeat();
        restarted.heartbeat();
        assertThat(restarted.isCaughtUp()).isFalse();
        assertThat(served).as("serving before the registration is applied locally").hasValue(0);
        assertThat(heartbeats).as("asking to be unfenced before catching up").hasValue(0);

        metadataCaughtUp.set(true);
        restarted.heartbeat();
        restarted.heartbeat();
        assertThat(restarted.isCaughtUp()).isTrue();
        assertThat(served).hasValue(1);
        assertThat(heartbeats).hasValue(2);
        assertThat(restarted.isFenced()).isFalse();
    }
}
