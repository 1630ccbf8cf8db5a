package dev.skein.operator.topic;

import dev.skein.operator.kafka.BootstrapResolver;
import dev.skein.operator.kafka.KafkaAdmins;
import dev.skein.operator.kafka.TopicAdmin;
import dev.skein.operator.kafka.TopicNotVisibleException;
import dev.skein.operator.model.Conditions;
import dev.skein.operator.model.DeletionPolicy;
import dev.skein.operator.model.SkeinTopic;
import dev.skein.operator.model.SkeinTopicStatus;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Keeps a Kafka topic in line with its SkeinTopic, one way from spec to cluster, as named steps:
 * resolve the cluster, check for a conflicting resource, read the topic, plan ({@link TopicDiff}),
 * apply, report. The status is written in full each time with conditions whose transition time only
 * moves when their status changes, so a reconcile that finds nothing new changes nothing.
 *
 * <p>Deletion (finalizer): with {@code deletionPolicy: Delete}, the topic is deleted only if it is
 * the very topic this resource created or adopted (same topic id); when the SkeinCluster is gone,
 * the finalizer is removed at once so a namespace deletion is never blocked.
 */
@ControllerConfiguration(name = SkeinTopicReconciler.NAME)
public final class SkeinTopicReconciler implements Reconciler<SkeinTopic>, Cleaner<SkeinTopic> {
    public static final String NAME = "skeintopic";
    private static final Logger LOG = LoggerFactory.getLogger(SkeinTopicReconciler.class);

    private final BootstrapResolver resolver;
    private final KafkaAdmins admins;
    private final Clock clock;
    private final Duration resync;

    /**
     * @param resync how often a topic is read again with no event (drift made outside the operator,
     *               a refused spec that the cluster may satisfy later, a running reassignment)
     */
    public SkeinTopicReconciler(BootstrapResolver resolver, KafkaAdmins admins, Clock clock, Duration resync) {
        this.resolver = resolver;
        this.admins = admins;
        this.clock = clock;
        this.resync = resync;
    }

    @Override
    public UpdateControl<SkeinTopic> reconcile(SkeinTopic resource, Context<SkeinTopic> context) {
        try {
            return reconcileTopic(resource, context);
        } catch (TopicNotVisibleException e) {
            SkeinTopicStatus status = resource.getStatus() == null ? new SkeinTopicStatus() : resource.getStatus();
            return report(resource, status, null, TopicReason.Creating, e.getMessage());
        }
    }

    private UpdateControl<SkeinTopic> reconcileTopic(SkeinTopic resource, Context<SkeinTopic> context) {
        String ns = resource.getMetadata().getNamespace();
        String name = resource.getMetadata().getName();
        String topicName = resource.topicName();
        SkeinTopicStatus status = resource.getStatus() == null ? new SkeinTopicStatus() : resource.getStatus();
        String cluster = resource.getSpec().getCluster();

        Optional<String> bootstrap = resolver.bootstrapServers(ns, cluster);
        if (bootstrap.isEmpty()) {
            return report(resource, status, null, TopicReason.ClusterNotFound,
                    "spec.cluster " + cluster + " names no SkeinCluster in namespace " + ns);
        }
        Optional<SkeinTopic> older = olderClaim(resource, context.getPrimaryCache().list(ns).toList());
        if (older.isPresent()) {
            return report(resource, status, null, TopicReason.ResourceConflict, "topic " + topicName
                    + " of cluster " + cluster + " is already managed by SkeinTopic " + older.get().getMetadata().getName());
        }
        TopicAdmin admin = new TopicAdmin(admins.forBootstrap(bootstrap.get()), admins.topicBatches(bootstrap.get()), admins.timeout().toMillis());
        DesiredTopic desired = DesiredTopic.of(resource);
        Optional<ActualTopic> actual = admin.describe(topicName);
        boolean managed = status.getTopicId() != null && actual.isPresent()
                && status.getTopicId().equals(actual.get().topicId());
        TopicPlan plan = TopicDiff.plan(desired, actual, managed, admin.brokerIds());

        switch (plan) {
            case TopicPlan.Refuse refuse -> {
                LOG.info("SkeinTopic {}/{}: topic {} not changed: {} {}", ns, name, topicName, refuse.reason(),
                        refuse.message());
                return report(resource, status, actual.orElse(null), refuse.reason(), refuse.message());
            }
            case TopicPlan.Create create -> {
                LOG.info("SkeinTopic {}/{}: creating topic {} with {} partitions, replication factor {}, configs {}",
                        ns, name, topicName, desired.partitions(), desired.replicationFactor(), desired.configs());
                admin.create(create.topic());
            }
            case TopicPlan.Update update when update.isEmpty() -> {
                if (!managed) {
                    LOG.info("SkeinTopic {}/{}: adopting existing topic {}, which matches the spec", ns, name, topicName);
                }
            }
            case TopicPlan.Update update -> {
                LOG.info("SkeinTopic {}/{}: updating topic {}: {}", ns, name, topicName, describe(update));
                if (update.newPartitionCount() > 0) {
                    admin.increasePartitions(topicName, update.newPartitionCount());
                }
                if (!update.reassignment().isEmpty() && !admin.reassignmentInProgress(topicName)) {
                    admin.reassign(topicName, update.reassignment());
                }
                if (!update.configChanges().isEmpty()) {
                    admin.alterConfigs(topicName, update.configChanges());
                }
            }
        }
        // right after a create, the broker asked may not know the topic yet: look again shortly
        ActualTopic now = admin.describe(topicName).orElseThrow(() -> new TopicNotVisibleException(topicName, null));
        if (now.replicationFactor() != desired.replicationFactor() || admin.reassignmentInProgress(topicName)) {
            return report(resource, status, now, TopicReason.ReassignmentInProgress, "replication factor "
                    + now.replicationFactor() + " is being changed to " + desired.replicationFactor());
        }
        return report(resource, status, now, TopicReason.InSync, "topic " + topicName + " has " + now.partitions()
                + " partitions, replication factor " + now.replicationFactor() + " and the spec's configs");
    }

    /** The changes of an update, for the log line. */
    static String describe(TopicPlan.Update update) {
        List<String> parts = new java.util.ArrayList<>();
        if (update.newPartitionCount() > 0) {
            parts.add("partitions to " + update.newPartitionCount());
        }
        if (!update.reassignment().isEmpty()) {
            parts.add("replicas to " + update.reassignment());
        }
        update.configChanges().forEach(c -> parts.add(c.op() == ConfigChange.Op.SET
                ? "set " + c.key() + "=" + c.value() : "remove " + c.key()));
        return String.join(", ", parts);
    }

    /** The oldest other SkeinTopic of the same cluster and topic name created before this one (name breaks a tie). */
    static Optional<SkeinTopic> olderClaim(SkeinTopic resource, List<SkeinTopic> sameNamespace) {
        Comparator<SkeinTopic> age = Comparator
                .comparing((SkeinTopic t) -> Instant.parse(t.getMetadata().getCreationTimestamp()))
                .thenComparing(t -> t.getMetadata().getName());
        return sameNamespace.stream()
                .filter(t -> !t.getMetadata().getName().equals(resource.getMetadata().getName()))
                .filter(t -> t.getMetadata().getDeletionTimestamp() == null)
                .filter(t -> Objects.equals(t.getSpec().getCluster(), resource.getSpec().getCluster()))
                .filter(t -> t.topicName().equals(resource.topicName()))
                .filter(t -> age.compare(t, resource) < 0)
                .min(age);
    }

    private UpdateControl<SkeinTopic> report(SkeinTopic resource, SkeinTopicStatus old, ActualTopic topic,
                                             TopicReason reason, String message) {
        long generation = resource.getMetadata().getGeneration();
        SkeinTopicStatus status = new SkeinTopicStatus();
        status.setObservedGeneration(generation);
        status.setTopicName(resource.topicName());
        boolean ready = reason == TopicReason.InSync;
        // a refused or unresolvable spec keeps the id of the topic the resource already manages
        status.setTopicId(topic != null && ready ? topic.topicId() : old.getTopicId());
        if (topic != null) {
            status.setPartitions(topic.partitions());
            status.setReplicationFactor(topic.replicationFactor());
            status.setUnderReplicatedPartitions(topic.underReplicatedPartitions());
        }
        status.setConditions(Conditions.set(old.getConditions(), Conditions.READY, ready, reason.name(), message,
                generation, clock.instant()));
        resource.setStatus(status);
        Duration next = switch (reason) {
            case Creating -> Duration.ofSeconds(1);
            case ReassignmentInProgress -> Duration.ofSeconds(5);
            default -> resync;
        };
        return UpdateControl.patchStatus(resource).rescheduleAfter(next);
    }

    @Override
    public ErrorStatusUpdateControl<SkeinTopic> updateErrorStatus(SkeinTopic resource, Context<SkeinTopic> context,
                                                                  Exception e) {
        LOG.warn("SkeinTopic {}/{}: {}", resource.getMetadata().getNamespace(), resource.getMetadata().getName(),
                e.getMessage());
        SkeinTopicStatus old = resource.getStatus() == null ? new SkeinTopicStatus() : resource.getStatus();
        report(resource, old, null, TopicReason.KafkaError, e.getMessage());
        resource.getStatus().setPartitions(old.getPartitions());
        resource.getStatus().setReplicationFactor(old.getReplicationFactor());
        resource.getStatus().setUnderReplicatedPartitions(old.getUnderReplicatedPartitions());
        return ErrorStatusUpdateControl.patchStatus(resource);
    }

    @Override
    public DeleteControl cleanup(SkeinTopic resource, Context<SkeinTopic> context) {
        String ns = resource.getMetadata().getNamespace();
        String name = resource.getMetadata().getName();
        DeletionPolicy policy = Optional.ofNullable(resource.getSpec().getDeletionPolicy()).orElse(DeletionPolicy.Retain);
        String topicId = resource.getStatus() == null ? null : resource.getStatus().getTopicId();
        if (policy == DeletionPolicy.Retain || topicId == null) {
            LOG.info("SkeinTopic {}/{}: deleted; topic {} retained ({})", ns, name, resource.topicName(),
                    policy == DeletionPolicy.Retain ? "deletionPolicy Retain" : "this resource never managed it");
            return DeleteControl.defaultDelete();
        }
        Optional<String> bootstrap = resolver.bootstrapServers(ns, resource.getSpec().getCluster());
        if (bootstrap.isEmpty()) {
            LOG.info("SkeinTopic {}/{}: deleted; SkeinCluster {} is gone, so there is no topic to delete", ns, name,
                    resource.getSpec().getCluster());
            return DeleteControl.defaultDelete();
        }
        TopicAdmin admin = new TopicAdmin(admins.forBootstrap(bootstrap.get()), admins.topicBatches(bootstrap.get()), admins.timeout().toMillis());
        Optional<ActualTopic> actual = admin.describe(resource.topicName());
        if (actual.isPresent() && topicId.equals(actual.get().topicId())) {
            LOG.info("SkeinTopic {}/{}: deleting topic {} (deletionPolicy Delete)", ns, name, resource.topicName());
            admin.delete(resource.topicName());
        } else {
            LOG.info("SkeinTopic {}/{}: deleted; topic {} with id {} no longer exists", ns, name, resource.topicName(),
                    topicId);
        }
        return DeleteControl.defaultDelete();
    }
}
