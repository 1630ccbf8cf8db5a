package dev.skein.broker.controller;

import dev.skein.broker.metadata.ClusterImage;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A broker's side of its lifecycle with the controller: registers (endpoint, rack, log-dir
 * incarnation), waits until its own metadata includes that registration, then heartbeats every
 * {@code broker.heartbeat.interval.ms}; re-registers when the controller no longer knows its epoch.
 *
 * <p>Catching up first matters after a restart: until then the local image is an old one, in which
 * this broker may still lead partitions whose logs have moved on elsewhere. The registration moved
 * those leaderships away, so once it is applied here {@code onCaughtUp} runs (the broker starts
 * acting on metadata and serving clients), and only then do heartbeats ask to be unfenced, as a
 * Kafka broker waits for its metadata log before it asks to be unfenced.
 *
 * <p>{@link #close} performs a controlled shutdown: heartbeats asking to shut down until the
 * controller has moved every leadership away (bounded by {@code shutdownTimeoutMs}), then stops. One thread does all of this, so calls never overlap.
 *
 * <p>{@link #outOfTouch} tells when the controller quorum has not answered a heartbeat for longer
 * than the session timeout and the last attempt failed: by then the controller has fenced this
 * broker and moved its leaderships, even if this broker, cut off, cannot learn it.
 */
public final class BrokerLifecycle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerLifecycle.class);

    private final Controller controller;
    private final ClusterImage.BrokerInfo self;
    private final long heartbeatIntervalMs;
    private final long shutdownTimeoutMs;
    private final Time time;
    private final long sessionTimeoutMs;
    private ScheduledExecutorService thread;
    private final Runnable onCaughtUp;
    private volatile long brokerEpoch = -1;
    private volatile boolean fenced = true;
    private volatile boolean caughtUp;
    /** When the controller last answered a heartbeat, -1 before the first answer. */
    private volatile long lastAnsweredMs = -1;
    private volatile boolean lastHeartbeatFailed;

    /** Without a session to watch: {@link #outOfTouch} never says yes. */
    public BrokerLifecycle(Controller controller, ClusterImage.BrokerInfo self, long heartbeatIntervalMs,
                           long shutdownTimeoutMs) {
        this(controller, self, heartbeatIntervalMs, shutdownTimeoutMs, () -> { }, Time.SYSTEM, Long.MAX_VALUE);
    }

    public BrokerLifecycle(Controller controller, ClusterImage.BrokerInfo self, long heartbeatIntervalMs,
                           long shutdownTimeoutMs, Time time, long sessionTimeoutMs) {
        this(controller, self, heartbeatIntervalMs, shutdownTimeoutMs, () -> { }, time, sessionTimeoutMs);
    }

    /** @param onCaughtUp runs once, on the lifecycle thread, when the local metadata includes the first registration */
    public BrokerLifecycle(Controller controller, ClusterImage.BrokerInfo self, long heartbeatIntervalMs,
                           long shutdownTimeoutMs, Runnable onCaughtUp, Time time, long sessionTimeoutMs) {
        this.controller = controller;
        this.self = self;
        this.heartbeatIntervalMs = heartbeatIntervalMs;
        this.shutdownTimeoutMs = shutdownTimeoutMs;
        this.onCaughtUp = onCaughtUp;
        this.time = time;
        this.sessionTimeoutMs = sessionTimeoutMs;
    }

    public synchronized void start() {
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "skein-broker-lifecycle-" + self.id());
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(this::heartbeat, 0, heartbeatIntervalMs, TimeUnit.MILLISECONDS);
    }

    /** The epoch of the current registration, or -1 before the broker is registered. */
    public long brokerEpoch() {
        return brokerEpoch;
    }

    /** Whether this broker's metadata has included its registration (it acts on metadata from then on). */
    public boolean isCaughtUp() {
        return caughtUp;
    }

    /** Whether the controller last answered that this broker is fenced. */
    public boolean isFenced() {
        return fenced;
    }

    /**
     * True once this broker, registered and answered before, has had no heartbeat answered for more
     * than the session timeout and its latest attempt failed. A leader in that state must not take
     * writes: the controller has fenced it and another replica leads (KIP-631's session, seen from
     * the broker's side). A heartbeat still in flight does not count as failed.
     */
    public boolean outOfTouch(long nowMs) {
        long last = lastAnsweredMs;
        return last >= 0 && lastHeartbeatFailed && nowMs - last > sessionTimeoutMs;
    }

    /** One heartbeat (registering first if needed); the lifecycle thread calls it every interval. */
    void heartbeat() {
        try {
            if (brokerEpoch < 0) {
                brokerEpoch = controller.registerBroker(self);
                log.info("Broker {} registered with epoch {} (incarnation {})", self.id(), brokerEpoch, self.incarnation());
            }
            if (!caughtUp) {
                if (!controller.awaitMetadata(brokerEpoch, Math.max(heartbeatIntervalMs, 1_000))) {
                    log.info("Broker {} is catching up with the metadata log (to {})", self.id(), brokerEpoch);
                    return;
                }
                caughtUp = true;
                log.info("Broker {} caught up with the metadata log at {}", self.id(), brokerEpoch);
                try {
                    onCaughtUp.run();
                } catch (RuntimeException e) {
                    log.error("Broker {} failed to start serving after catching up", self.id(), e);
                }
            }
            boolean wasFenced = fenced;
            fenced = controller.heartbeat(self.id(), brokerEpoch, false).fenced();
            answered();
            if (wasFenced && !fenced) {
                log.info("Broker {} is unfenced", self.id());
            }
        } catch (StaleBrokerEpochException | BrokerIdNotRegisteredException e) {
            // the controller answered: it is reachable
            answered();
            log.info("Broker {} must register again: {}", self.id(), e.getMessage());
            brokerEpoch = -1;
            fenced = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ApiException e) {
            failed();
            log.info("Broker {} heartbeat failed: {}", self.id(), e.toString());
        } catch (RuntimeException e) {
            failed();
            log.warn("Broker {} heartbeat failed: {}", self.id(), e.toString());
        }
    }

    private void answered() {
        lastAnsweredMs = time.milliseconds();
        lastHeartbeatFailed = false;
    }

    private void failed() {
        boolean wasOutOfTouch = outOfTouch(time.milliseconds());
        lastHeartbeatFailed = true;
        if (!wasOutOfTouch && outOfTouch(time.milliseconds())) {
            log.warn("Broker {} has not reached the controller quorum for {} ms (session timeout {} ms): it takes no"
                    + " writes as leader until it does", self.id(), time.milliseconds() - lastAnsweredMs, sessionTimeoutMs);
        }
    }

    /** Controlled shutdown (bounded), then stops heartbeating. */
    @Override
    public synchronized void close() {
        if (thread == null) {
            return;
        }
        CompletableFuture<Void> allowed = new CompletableFuture<>();
        thread.shutdownNow();
        ScheduledExecutorService shutdown = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "skein-broker-controlled-shutdown-" + self.id());
            t.setDaemon(true);
            return t;
        });
        if (brokerEpoch >= 0) {
            shutdown.scheduleWithFixedDelay(() -> {
                try {
                    if (controller.heartbeat(self.id(), brokerEpoch, true).shutdownAllowed()) {
                        allowed.complete(null);
                    }
                } catch (RuntimeException e) {
                    log.debug("Controlled shutdown heartbeat of broker {} failed: {}", self.id(), e.toString());
                }
            }, 0, Math.max(50, Math.min(heartbeatIntervalMs, 500)), TimeUnit.MILLISECONDS);
            try {
                allowed.get(shutdownTimeoutMs, TimeUnit.MILLISECONDS);
                log.info("Broker {} completed its controlled shutdown", self.id());
            } catch (TimeoutException | ExecutionException e) {
                log.warn("Broker {} stops without a completed controlled shutdown after {} ms", self.id(), shutdownTimeoutMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        shutdown.shutdownNow();
        thread = null;
    }
}
