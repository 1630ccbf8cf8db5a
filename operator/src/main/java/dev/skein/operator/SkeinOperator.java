package dev.skein.operator;

import dev.skein.operator.cluster.SkeinClusterReconciler;
import dev.skein.operator.group.SkeinConsumerGroupReconciler;
import dev.skein.operator.kafka.BootstrapResolver;
import dev.skein.operator.kafka.KafkaAdmins;
import dev.skein.operator.kafka.SkeinClusterBootstrapResolver;
import dev.skein.operator.metrics.ConsumerLagMetrics;
import dev.skein.operator.metrics.OperatorHttp;
import dev.skein.operator.metrics.ReconcileMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import dev.skein.operator.topic.SkeinTopicReconciler;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

/**
 * The Skein operator: registers one reconciler per kind with java-operator-sdk and runs them until
 * closed. {@link #main} is the entry point of {@code skein-operator.jar}; tests start it in-process
 * with {@link #builder(KubernetesClient)}.
 */
public final class SkeinOperator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SkeinOperator.class);
    private static final String USAGE = "usage: java -jar skein-operator.jar [--kubeconfig FILE] [--namespace NS]... "
            + "[--reconcilers skeincluster,skeintopic,skeinconsumergroup] [--resync-seconds N] "
            + "[--leader-election-namespace NS] [--http-port N (default 8080, -1 none)]";
    /** The port of /metrics and /healthz of the deployed operator. */
    public static final int DEFAULT_HTTP_PORT = 8080;
    /** The Lease the replicas of the operator elect their leader with. */
    public static final String LEASE_NAME = "skein-operator";
    /** Names of the reconcilers, as {@code --reconcilers} takes them. */
    public static final Set<String> ALL_RECONCILERS = Set.of(SkeinClusterReconciler.NAME, SkeinTopicReconciler.NAME,
            SkeinConsumerGroupReconciler.NAME);

    private final Operator operator;
    private final KafkaAdmins admins;
    private final OperatorHttp http;

    private SkeinOperator(Operator operator, KafkaAdmins admins, OperatorHttp http) {
        this.operator = operator;
        this.admins = admins;
        this.http = http;
    }

    /** The port of {@code /metrics} and {@code /healthz}, or -1 when they are off. */
    public int httpPort() {
        return http == null ? -1 : http.port();
    }

    public static Builder builder(KubernetesClient client) {
        return new Builder(client);
    }

    /** Options of an operator; the defaults are those of the deployed operator. */
    public static final class Builder {
        private final KubernetesClient client;
        private BootstrapResolver resolver;
        private Set<String> namespaces = Set.of();
        private Duration adminTimeout = Duration.ofSeconds(30);
        private Duration resync = Duration.ofMinutes(2);
        private Clock clock = Clock.systemUTC();
        private Set<String> reconcilers = ALL_RECONCILERS;
        private String leaseNamespace;
        private String identity;
        private int httpPort = -1;

        private Builder(KubernetesClient client) {
            this.client = client;
            this.resolver = new SkeinClusterBootstrapResolver(client);
        }

        /** Where the brokers of a SkeinCluster are reached (default: the cluster's status, else its bootstrap Service). */
        public Builder bootstrapResolver(BootstrapResolver resolver) {
            this.resolver = resolver;
            return this;
        }

        /** Namespaces to watch; empty (the default) watches all. */
        public Builder namespaces(Set<String> namespaces) {
            this.namespaces = Set.copyOf(namespaces);
            return this;
        }

        public Builder adminTimeout(Duration adminTimeout) {
            this.adminTimeout = adminTimeout;
            return this;
        }

        public Builder resync(Duration resync) {
            this.resync = resync;
            return this;
        }

        /**
         * Run only while holding the Lease {@value #LEASE_NAME} in {@code namespace}, so that two or
         * more replicas of the operator are safe: one reconciles, the others wait to take over.
         *
         * @param identity this replica's name in the Lease (unique among the replicas)
         */
        public Builder leaderElection(String namespace, String identity) {
            this.leaseNamespace = namespace;
            this.identity = identity;
            return this;
        }

        /** Serve {@code /metrics} and {@code /healthz} on this port (0: any free port; default -1: off). */
        public Builder httpPort(int httpPort) {
            this.httpPort = httpPort;
            return this;
        }

        /** Which reconcilers run: a subset of {@link #ALL_RECONCILERS} (default all). */
        public Builder reconcilers(Set<String> reconcilers) {
            if (reconcilers.isEmpty() || !ALL_RECONCILERS.containsAll(reconcilers)) {
                throw new IllegalArgumentException("reconcilers " + reconcilers + ": choose from " + ALL_RECONCILERS);
            }
            this.reconcilers = Set.copyOf(reconcilers);
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Registers the reconcilers and starts their informers; returns once the caches are synced. */
        public SkeinOperator start() throws IOException {
            KafkaAdmins admins = new KafkaAdmins(adminTimeout);
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            new JvmMemoryMetrics().bindTo(registry);
            ConsumerLagMetrics lagMetrics = new ConsumerLagMetrics(registry);
            // Every dependent is matched server-side-apply style. JOSDK's other matcher (its default for
            // ConfigMaps and Secrets) is built on Jackson 2, which fabric8 8 (Jackson 3) does not bring.
            Operator operator = new Operator(o -> {
                o.withKubernetesClient(client).withCloseClientOnStop(false).withDefaultNonSSAResource(Set.of())
                        .withMetrics(new ReconcileMetrics(registry));
                if (leaseNamespace != null) {
                    // losing the lease exits the process: its restart rejoins as a follower
                    o.withLeaderElectionConfiguration(new LeaderElectionConfiguration(LEASE_NAME, leaseNamespace,
                            LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE,
                            LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
                            LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE, identity, null, true));
                }
            });
            if (reconcilers.contains(SkeinClusterReconciler.NAME)) {
                operator.register(new SkeinClusterReconciler(admins, clock, registry), c -> {
                    watch(c, namespaces);
                    c.withReconciliationMaxInterval(resync);
                });
            }
            if (reconcilers.contains(SkeinConsumerGroupReconciler.NAME)) {
                operator.register(new SkeinConsumerGroupReconciler(resolver, admins, lagMetrics, clock, resync),
                        c -> watch(c, namespaces));
            }
            if (reconcilers.contains(SkeinTopicReconciler.NAME)) {
                operator.register(new SkeinTopicReconciler(resolver, admins, clock, resync), c -> watch(c, namespaces));
            }
            operator.start();
            OperatorHttp http = httpPort < 0 ? null : new OperatorHttp(httpPort, registry);
            LOG.info("Skein operator started against {} with reconcilers {}, watching {}{}{}", client.getMasterUrl(),
                    new TreeSet<>(reconcilers), namespaces.isEmpty() ? "all namespaces" : namespaces,
                    leaseNamespace == null ? "" : ", as " + identity + " once it holds Lease " + leaseNamespace + "/"
                            + LEASE_NAME, http == null ? "" : "; /metrics and /healthz on port " + http.port());
            return new SkeinOperator(operator, admins, http);
        }
    }

    private static void watch(ControllerConfigurationOverrider<?> c, Set<String> namespaces) {
        if (namespaces.isEmpty()) {
            c.watchingAllNamespaces();
        } else {
            c.settingNamespaces(namespaces);
        }
    }

    @Override
    public void close() {
        try {
            operator.stop();
        } finally {
            admins.close();
            if (http != null) {
                http.close();
            }
        }
    }

    /**
     * {@code java -jar skein-operator.jar [--kubeconfig FILE] [--namespace NS]... [--reconcilers skeincluster,skeintopic] [--resync-seconds N]}: without
     * {@code --kubeconfig}, the in-cluster service account, {@code KUBECONFIG} or ~/.kube/config.
     * {@code --namespace} (repeatable) limits the watched namespaces; {@code --resync-seconds} is how
     * often each resource is checked against the cluster without an event (default 120);
     * {@code --reconcilers} runs only some reconcilers (default all); with
     * {@code --leader-election-namespace} the replicas elect one leader through a Lease there.
     */
    public static void main(String[] args) throws Exception {
        Path kubeconfig = null;
        Set<String> namespaces = new LinkedHashSet<>();
        Duration resync = null;
        Set<String> reconcilers = ALL_RECONCILERS;
        String leaseNamespace = null;
        int httpPort = DEFAULT_HTTP_PORT;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kubeconfig" -> kubeconfig = Path.of(value(args, ++i, "--kubeconfig"));
                case "--namespace" -> namespaces.add(value(args, ++i, "--namespace"));
                case "--leader-election-namespace" -> leaseNamespace = value(args, ++i, "--leader-election-namespace");
                case "--http-port" -> httpPort = (int) port(value(args, ++i, "--http-port"));
                case "--reconcilers" -> reconcilers = Set.of(value(args, ++i, "--reconcilers").split(","));
                case "--resync-seconds" -> resync = Duration.ofSeconds(positive(value(args, ++i, "--resync-seconds"),
                        "--resync-seconds"));
                case "-h", "--help" -> {
                    System.out.println(USAGE);
                    return;
                }
                default -> throw usage("unknown argument " + args[i]);
            }
        }
        KubernetesClient client = kubeconfig == null ? new KubernetesClientBuilder().build()
                : new KubernetesClientBuilder().withConfig(fromKubeconfig(kubeconfig)).build();
        Builder builder = SkeinOperator.builder(client).namespaces(namespaces).reconcilers(reconcilers)
                .httpPort(httpPort);
        if (resync != null) {
            builder.resync(resync);
        }
        if (leaseNamespace != null) {
            builder.leaderElection(leaseNamespace, defaultIdentity());
        }
        SkeinOperator operator = builder.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("Skein operator stopping");
            operator.close();
            client.close();
            stopped.countDown();
        }, "skein-operator-shutdown"));
        stopped.await();
    }

    /** The pod name in a cluster (HOSTNAME), else this machine's name; with the process id, unique per replica. */
    static String defaultIdentity() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.net.UnknownHostException e) {
                host = "skein-operator";
            }
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    private static Config fromKubeconfig(Path file) throws IOException {
        if (!Files.isReadable(file)) {
            throw usage("--kubeconfig " + file + ": no such readable file");
        }
        return Config.fromKubeconfig(Files.readString(file));
    }

    private static long port(String text) {
        try {
            int n = Integer.parseInt(text);
            if (n >= -1 && n <= 65535) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw usage("--http-port " + text + ": a port 0..65535, or -1 for none");
    }

    private static long positive(String text, String option) {
        try {
            long n = Long.parseLong(text);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw usage(option + " " + text + ": a positive whole number of seconds is needed");
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw usage(option + " needs a value");
        }
        return args[i];
    }

    private static IllegalArgumentException usage(String message) {
        return new IllegalArgumentException(message + " (" + USAGE + ")");
    }
}
