package dev.skein.broker.server;

import dev.skein.broker.api.KafkaApis;
import dev.skein.broker.api.SupportedApis;
import dev.skein.broker.config.BrokerConfig;
import dev.skein.broker.config.DynamicBrokerConfigs;
import dev.skein.broker.controller.BrokerLifecycle;
import dev.skein.broker.controller.Controller;
import dev.skein.broker.controller.Controllers;
import dev.skein.broker.coordinator.GroupConfig;
import dev.skein.broker.coordinator.GroupCoordinator;
import dev.skein.broker.http.HttpEndpoints;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.Topics;
import dev.skein.broker.network.RequestHandler;
import dev.skein.broker.network.RequestMetrics;
import dev.skein.broker.network.SocketServer;
import dev.skein.broker.replication.ReplicaFetcherManager;
import dev.skein.broker.replication.ReplicationThrottles;
import dev.skein.broker.replication.Throttle;
import dev.skein.broker.replication.ReplicationConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One Skein broker: wires the log dirs, controller, replica manager, group coordinator, request
 * handlers and listeners together, and takes them down in reverse order. Construction does nothing;
 * {@link #start} does the work, so tests and {@code Main} control the lifecycle.
 *
 * <p>The Kafka listener binds first (so port 0 works and the advertised port is known), but
 * requests wait until start-up has finished; {@code /readyz} turns ready at the same moment.
 */
public final class SkeinBroker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SkeinBroker.class);

    private final BrokerConfig config;
    private final Time time;
    private final ControllerFactory controllerFactory;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final CompletableFuture<RequestHandler> handler = new CompletableFuture<>();
    private volatile boolean ready;
    private int port = -1;
    private int httpPort = -1;
    private String advertisedHost;
    private ScheduledExecutorService scheduler;
    private ReplicaManager replicaManager;

    /** A broker with the controller its config asks for: a Raft quorum for two or more voters, else local. */
    public SkeinBroker(BrokerConfig config, Time time) {
        this(config, time, (cfg, clusterId, self) -> Controllers.start(cfg, clusterId, self, time));
    }

    /** A broker whose cluster metadata comes from {@code controllerFactory} (tests share one controller between brokers). */
    public SkeinBroker(BrokerConfig config, Time time, ControllerFactory controllerFactory) {
        this.config = config;
        this.time = time;
        this.controllerFactory = controllerFactory;
    }

    /** The throttle rates follow the dynamic broker configs: this broker's override, the cluster default, the static value. */
    private void applyThrottleRates(ReplicationThrottles throttles, ClusterImage image) {
        long leader = DynamicBrokerConfigs.rate(image, config, config.nodeId(), BrokerConfig.LEADER_REPLICATION_THROTTLED_RATE);
        long follower = DynamicBrokerConfigs.rate(image, config, config.nodeId(), BrokerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE);
        if (leader != throttles.leader().rate() || follower != throttles.follower().rate()) {
            log.info("Broker {} replication throttles: leader {} B/s, follower {} B/s", config.nodeId(),
                    leader == Throttle.UNLIMITED ? "unlimited" : leader, follower == Throttle.UNLIMITED ? "unlimited" : follower);
        }
        throttles.leader().setRate(leader);
        throttles.follower().setRate(follower);
    }

    private static void registerThrottleMetrics(io.micrometer.core.instrument.MeterRegistry registry, ReplicationThrottles throttles) {
        io.micrometer.core.instrument.FunctionCounter.builder("kafka.server.replication.throttled.bytes", throttles.leader(),
                        Throttle::totalBytes)
                .tag("direction", "leader").baseUnit("bytes")
                .description("Bytes sent as leader to throttled replicas outside the ISR").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("kafka.server.replication.throttled.bytes", throttles.follower(),
                        Throttle::totalBytes)
                .tag("direction", "follower").baseUnit("bytes")
                .description("Bytes fetched as follower for throttled replicas outside the ISR").register(registry);
    }

    /** Makes the controller a broker serves from, once its advertised endpoint is known. */
    @FunctionalInterface
    public interface ControllerFactory {
        Controller create(BrokerConfig config, String clusterId, ClusterImage.BrokerInfo self) throws IOException;
    }

    public static SkeinBroker start(BrokerConfig config) throws Exception {
        return started(new SkeinBroker(config, Time.SYSTEM));
    }

    /** A started broker whose controller comes from {@code controllers}; closed again if it fails to start. */
    public static SkeinBroker start(BrokerConfig config, ControllerFactory controllers) throws Exception {
        return started(new SkeinBroker(config, Time.SYSTEM, controllers));
    }

    private static SkeinBroker started(SkeinBroker broker) throws Exception {
        try {
            broker.start();
        } catch (Exception e) {
            broker.close();
            throw e;
        }
        return broker;
    }

    public synchronized void start() throws Exception {
        config.logIgnoredKeys();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
        new io.micrometer.core.instrument.binder.system.ProcessorMetrics().bindTo(registry);
        resources.add(registry::close);

        Controllers.isVoter(config); // refuses roles that disagree with the voters before a dir is touched
        LogDirs logDirs = LogDirs.formatAndLock(config.logDirs(), config.nodeId(), Controllers.clusterId(config));
        resources.add(logDirs);

        ExecutorService requestPool = Executors.newFixedThreadPool(config.numIoThreads(), threads("skein-request-handler"));
        resources.add(requestPool::shutdownNow);
        BrokerConfig.Listener listener = config.brokerListener();
        SocketServer socketServer = new SocketServer(listener.host(), listener.port(), config.socketRequestMaxBytes(),
                config.numNetworkThreads(), (ctx, request) -> handler.thenCompose(h -> h.handle(ctx, request)),
                requestPool, SupportedApis.response(), new RequestMetrics(registry, time, SupportedApis.apis()))
                .inlineRequests(config.inlineRequests())
                .socketBuffers(config.socketSendBufferBytes(), config.socketReceiveBufferBytes());
        resources.add(socketServer);
        port = socketServer.start();
        BrokerConfig.Listener advertised = config.advertisedListener(port);
        advertisedHost = advertised.host();

        if (config.httpPort() >= 0) {
            HttpEndpoints http = new HttpEndpoints(listener.host(), config.httpPort(), registry, () -> ready);
            resources.add(http);
            httpPort = http.port();
        }

        scheduler = Executors.newScheduledThreadPool(2, threads("skein-scheduler"));
        resources.add(scheduler::shutdownNow);
        ExecutorService purgatory = Executors.newFixedThreadPool(2, threads("skein-fetch-purgatory"));
        resources.add(purgatory::shutdownNow);

        ClusterImage.BrokerInfo self = new ClusterImage.BrokerInfo(config.nodeId(), advertised.host(), advertised.port(),
                config.rack(), logDirs.incarnation(), false);
        Controller controller = controllerFactory.create(config, logDirs.clusterId(), self);
        resources.add(controller);

        LogManager logManager = new LogManager(config.logDirs(), time);
        resources.add(logManager);
        logManager.scan();
        replicaManager = new ReplicaManager(config.nodeId(), logManager, config.topicConfigDefaults(), time, scheduler, purgatory, registry);
        resources.add(replicaManager);

        // replication: fetchers for the partitions this broker follows; stopped before the replica manager
        ReplicationConfig replication = ReplicationConfig.from(config);
        ReplicationThrottles throttles = ReplicationThrottles.create(time);
        ReplicaFetcherManager fetchers = new ReplicaFetcherManager(config.nodeId(), replicaManager, replication, time,
                throttles.follower());
        resources.add(fetchers);
        replicaManager.enableReplication(controller, fetchers, replication);
        replicaManager.enableThrottling(throttles);
        registerThrottleMetrics(registry, throttles);

        // The group coordinator holds the groups of the __consumer_offsets partitions this broker
        // leads: it loads a partition when the broker becomes its leader and forgets it when it stops.
        var offsetsTopic = controller.image().topic(Topics.GROUP_METADATA_TOPIC);
        int offsetPartitions = offsetsTopic != null ? offsetsTopic.partitionCount() : config.offsetsTopicNumPartitions();
        GroupCoordinator coordinator = new GroupCoordinator(new GroupConfig(config.groupMinSessionTimeoutMs(),
                config.groupMaxSessionTimeoutMs(), config.groupInitialRebalanceDelayMs(), config.groupMaxSize(),
                config.offsetsRetentionMs(), config.offsetsRetentionCheckIntervalMs()),
                new LogOffsetStore(replicaManager, offsetPartitions, time), time);
        coordinator.setPartitionExists((topic, partition) -> {
            var t = controller.image().topic(topic);
            return t != null && partition >= 0 && partition < t.partitionCount();
        });
        coordinator.setTopicIds(id -> {
            var t = controller.image().topic(id);
            return t == null ? null : t.name();
        }, name -> {
            var t = controller.image().topic(name);
            return t == null ? null : t.id();
        });
        resources.add(coordinator);
        replicaManager.addLeadershipListener((tp, leader, leaderEpoch) -> {
            if (tp.topic().equals(Topics.GROUP_METADATA_TOPIC) && tp.partition() < offsetPartitions) {
                if (leader) {
                    coordinator.onElection(tp.partition(), leaderEpoch);
                } else {
                    coordinator.onResignation(tp.partition(), leaderEpoch);
                }
            }
        });
        coordinator.startWithoutPartitions();
        // Closed again here (resources close in reverse): the listener stops serving right after the
        // controlled shutdown and before the coordinator, replica manager and logs go, so no client is
        // answered from a half-stopped broker (a fetch with UNKNOWN_TOPIC_ID, a commit with
        // COORDINATOR_NOT_AVAILABLE) instead of seeing the connection close, as with Kafka.
        resources.add(socketServer::close);

        // With a quorum the local image may be an old one until this broker's registration is applied
        // (a restart replays the metadata log): the broker acts on metadata and serves only from then on.
        Runnable actOnMetadata = () -> controller.subscribe(img -> {
            applyThrottleRates(throttles, img);
            replicaManager.applyImage(img);
        });
        if (!Controllers.isQuorum(config)) {
            actOnMetadata.run();
            if (controller.image().topic(Topics.GROUP_METADATA_TOPIC) == null) {
                createOffsetsTopic(controller, 1);
            }
        }

        scheduleBackgroundWork(logManager);
        KafkaApis apis = new KafkaApis(config, controller, replicaManager, coordinator, time, new java.util.Random());
        io.micrometer.core.instrument.Gauge.builder("kafka.server.fetchsessioncache.num.incremental.fetch.sessions", apis,
                        KafkaApis::fetchSessionCount)
                .description("Incremental fetch sessions (KIP-227) open on this broker").register(registry);
        if (Controllers.isQuorum(config)) {
            Runnable serve = () -> {
                actOnMetadata.run();
                scheduler.scheduleWithFixedDelay(() -> createOffsetsTopicOnceBrokersAreLive(controller),
                        0, config.brokerHeartbeatIntervalMs(), TimeUnit.MILLISECONDS);
                serve(apis);
            };
            // registers, catches up, then serves and heartbeats; closed first, so close() begins
            // with the controlled shutdown
            BrokerLifecycle lifecycle = new BrokerLifecycle(controller, self, config.brokerHeartbeatIntervalMs(),
                    Math.min(config.brokerSessionTimeoutMs(), 10_000), serve, time, config.brokerSessionTimeoutMs());
            replicaManager.refuseWritesWhile(() -> lifecycle.outOfTouch(time.milliseconds()));
            lifecycle.start();
            resources.add(lifecycle);
            log.info("Skein broker {} started: cluster {}, listening on {}:{} (advertised {}), HTTP port {}; "
                            + "requests are served once its metadata has caught up", config.nodeId(), logDirs.clusterId(),
                    listener.host(), port, advertised, httpPort);
        } else {
            serve(apis);
            log.info("Skein broker {} started: cluster {}, listening on {}:{} (advertised {}), HTTP port {}",
                    config.nodeId(), logDirs.clusterId(), listener.host(), port, advertised, httpPort);
        }
    }

    private void serve(KafkaApis apis) {
        handler.complete(apis);
        ready = true;
    }

    private void createOffsetsTopic(Controller controller, int replicationFactor) {
        controller.createTopic(Topics.GROUP_METADATA_TOPIC, config.offsetsTopicNumPartitions(), (short) replicationFactor,
                Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(config.offsetsTopicSegmentBytes())),
                false);
    }

    /** With a quorum: creates the offsets topic once min(its replication factor, voters) brokers are live. */
    private void createOffsetsTopicOnceBrokersAreLive(Controller controller) {
        ClusterImage image = controller.image();
        if (image.topic(Topics.GROUP_METADATA_TOPIC) != null) {
            return;
        }
        long live = image.brokers().stream().filter(b -> !b.fenced()).count();
        int wanted = Math.min(config.offsetsTopicReplicationFactor(), config.controllerQuorumVoters().size());
        if (live >= wanted && live > 0) {
            try {
                createOffsetsTopic(controller, (int) Math.min(config.offsetsTopicReplicationFactor(), live));
            } catch (org.apache.kafka.common.errors.ApiException e) {
                log.debug("Offsets topic not created yet: {}", e.toString());
            }
        }
    }

    private void scheduleBackgroundWork(LogManager logManager) {
        long retentionMs = config.logRetentionCheckIntervalMs();
        scheduler.scheduleWithFixedDelay(logManager::runRetention, retentionMs, retentionMs, TimeUnit.MILLISECONDS);
        long flushMs = Math.min(config.logFlushSchedulerIntervalMs(), 1000L);
        scheduler.scheduleWithFixedDelay(logManager::runFlush, flushMs, flushMs, TimeUnit.MILLISECONDS);
        long hwMs = config.replicaHighWatermarkCheckpointIntervalMs();
        scheduler.scheduleWithFixedDelay(replicaManager::checkpointHighWatermarks, hwMs, hwMs, TimeUnit.MILLISECONDS);
        if (config.logCleanerEnable()) {
            long backoff = Math.max(10L, config.logCleanerBackoffMs());
            scheduler.scheduleWithFixedDelay(() -> {
                // clean while there is work, then back off
                for (int i = 0; i < 100 && logManager.runCleaner(); i++) {
                    if (Thread.currentThread().isInterrupted()) {
                        return;
                    }
                }
            }, backoff, backoff, TimeUnit.MILLISECONDS);
        }
    }

    private static java.util.concurrent.ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    public int port() {
        return port;
    }

    public int httpPort() {
        return httpPort;
    }

    public String bootstrapServers() {
        return advertisedHost + ":" + port;
    }

    public boolean isReady() {
        return ready;
    }

    public BrokerConfig config() {
        return config;
    }

    /** The hosted partitions (null before {@link #start}); tests compare replicas' logs through it. */
    public ReplicaManager replicaManager() {
        return replicaManager;
    }

    /** Stops in reverse start order; safe to call more than once and after a failed start. */
    @Override
    public synchronized void close() {
        ready = false;
        if (!handler.isDone()) {
            handler.completeExceptionally(new IllegalStateException("broker is shutting down"));
        }
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                log.warn("Error during shutdown: {}", e.toString());
            }
        }
        resources.clear();
        log.info("Skein broker {} stopped", config.nodeId());
    }

}
