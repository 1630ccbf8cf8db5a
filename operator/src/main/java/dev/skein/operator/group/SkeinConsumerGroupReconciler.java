package dev.skein.operator.group;

import dev.skein.operator.kafka.BootstrapResolver;
import dev.skein.operator.kafka.GroupAdmin;
import dev.skein.operator.kafka.KafkaAdmins;
import dev.skein.operator.metrics.ConsumerLagMetrics;
import dev.skein.operator.model.Conditions;
import dev.skein.operator.model.DeletionPolicy;
import dev.skein.operator.model.OffsetReset;
import dev.skein.operator.model.PartitionLag;
import dev.skein.operator.model.PartitionOffset;
import dev.skein.operator.model.SkeinConsumerGroup;
import dev.skein.operator.model.SkeinConsumerGroupStatus;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reports a consumer group's state, members and lag, and applies its declarative offset reset
 * once per change of {@code spec.offsetReset}, only while the group has no active members
 * ({@link OffsetResetDecision}). The group itself belongs to its consumers: the operator never
 * creates it, and deletes its offsets only with {@code deletionPolicy: Delete} and no members.
 */
@ControllerConfiguration(name = SkeinConsumerGroupReconciler.NAME)
public final class SkeinConsumerGroupReconciler implements Reconciler<SkeinConsumerGroup>, Cleaner<SkeinConsumerGroup> {
    public static final String NAME = "skeinconsumergroup";
    /** Condition type of the declarative offset reset. */
    public static final String OFFSET_RESET = "OffsetReset";
    private static final Logger LOG = LoggerFactory.getLogger(SkeinConsumerGroupReconciler.class);

    private final BootstrapResolver resolver;
    private final KafkaAdmins admins;
    private final ConsumerLagMetrics lagMetrics;
    private final Clock clock;
    private final Duration resync;

    /** @param resync how often the lag is read again */
    public SkeinConsumerGroupReconciler(BootstrapResolver resolver, KafkaAdmins admins, ConsumerLagMetrics lagMetrics,
                                        Clock clock, Duration resync) {
        this.resolver = resolver;
        this.admins = admins;
        this.lagMetrics = lagMetrics;
        this.clock = clock;
        this.resync = resync;
    }

    @Override
    public UpdateControl<SkeinConsumerGroup> reconcile(SkeinConsumerGroup resource, Context<SkeinConsumerGroup> context) {
        String ns = resource.getMetadata().getNamespace();
        String name = resource.getMetadata().getName();
        String groupId = resource.groupId();
        long generation = resource.getMetadata().getGeneration();
        SkeinConsumerGroupStatus old = resource.getStatus() == null ? new SkeinConsumerGroupStatus() : resource.getStatus();
        SkeinConsumerGroupStatus status = new SkeinConsumerGroupStatus();
        status.setObservedGeneration(generation);
        status.setGroupId(groupId);
        status.setAppliedOffsetReset(old.getAppliedOffsetReset());
        status.setConditions(old.getConditions());

        Optional<String> bootstrap = resolver.bootstrapServers(ns, resource.getSpec().getCluster());
        if (bootstrap.isEmpty()) {
            status.setConditions(Conditions.set(status.getConditions(), Conditions.READY, false, "ClusterNotFound",
                    "spec.cluster " + resource.getSpec().getCluster() + " names no SkeinCluster in namespace " + ns,
                    generation, clock.instant()));
            resource.setStatus(status);
            return UpdateControl.patchStatus(resource).rescheduleAfter(resync);
        }
        GroupAdmin admin = new GroupAdmin(admins.forBootstrap(bootstrap.get()), admins.timeout().toMillis());
        GroupAdmin.GroupView group = admin.describe(groupId);
        OffsetReset reset = resource.getSpec().getOffsetReset();
        switch (OffsetResetDecision.decide(reset, old.getAppliedOffsetReset(), group.members())) {
            case OffsetResetDecision.None none -> {
                if (reset == null) {
                    status.setConditions(status.getConditions().stream()
                            .filter(c -> !OFFSET_RESET.equals(c.getType())).toList());
                }
            }
            case OffsetResetDecision.Wait wait -> status.setConditions(Conditions.set(status.getConditions(),
                    OFFSET_RESET, false, "WaitingForInactiveGroup", wait.message(), generation, clock.instant()));
            case OffsetResetDecision.Apply apply -> {
                Map<TopicPartition, Long> targets = targets(reset, admin, admin.committed(groupId));
                LOG.info("SkeinConsumerGroup {}/{}: resetting group {} to {} on {} partition(s): {}", ns, name, groupId,
                        reset.getTo(), targets.size(), targets);
                admin.alterOffsets(groupId, targets);
                status.setAppliedOffsetReset(apply.fingerprint());
                status.setConditions(Conditions.set(status.getConditions(), OFFSET_RESET, true, "Applied",
                        "offsets of " + targets.size() + " partition(s) reset to " + reset.getTo(), generation,
                        clock.instant()));
            }
        }
        Map<TopicPartition, Long> committed = admin.committed(groupId);
        List<PartitionLag> lags = GroupLag.of(committed, admin.offsets(committed.keySet(), OffsetSpec.latest()));
        status.setState(group.state());
        status.setMembers(group.members());
        status.setOffsets(lags);
        status.setTotalLag(GroupLag.total(lags));
        lagMetrics.update(ns, groupId, lags, status.getTotalLag());
        status.setConditions(Conditions.set(status.getConditions(), Conditions.READY, true, "Observed",
                "group " + groupId + " is " + group.state() + " with " + group.members() + " member(s)", generation,
                clock.instant()));
        resource.setStatus(status);
        return UpdateControl.patchStatus(resource).rescheduleAfter(resync);
    }

    /** The offsets a reset moves the group to, by partition. */
    private static Map<TopicPartition, Long> targets(OffsetReset reset, GroupAdmin admin,
                                                     Map<TopicPartition, Long> committed) {
        if (reset.getTo() == OffsetReset.Target.Offsets) {
            Map<TopicPartition, Long> out = new HashMap<>();
            for (PartitionOffset o : reset.getOffsets()) {
                out.put(new TopicPartition(o.getTopic(), o.getPartition()), o.getOffset());
            }
            return out;
        }
        Set<TopicPartition> partitions = OffsetResetDecision.partitions(reset, committed.keySet(),
                admin.partitionCounts(reset.getTopics() == null ? List.of() : reset.getTopics()));
        return switch (reset.getTo()) {
            case Earliest -> admin.offsets(partitions, OffsetSpec.earliest());
            case Latest -> admin.offsets(partitions, OffsetSpec.latest());
            case Timestamp -> {
                long ms = OffsetDateTime.parse(reset.getTimestamp()).toInstant().toEpochMilli();
                Map<TopicPartition, Long> at = new HashMap<>(admin.offsets(partitions, OffsetSpec.forTimestamp(ms)));
                Map<TopicPartition, Long> latest = admin.offsets(partitions, OffsetSpec.latest());
                // no record at or after the time: the end of the partition, as Kafka's tools do
                at.replaceAll((tp, o) -> o < 0 ? latest.get(tp) : o);
                yield at;
            }
            case Offsets -> throw new IllegalStateException("handled above");
        };
    }

    @Override
    public ErrorStatusUpdateControl<SkeinConsumerGroup> updateErrorStatus(SkeinConsumerGroup resource,
                                                                          Context<SkeinConsumerGroup> context,
                                                                          Exception e) {
        LOG.warn("SkeinConsumerGroup {}/{}: {}", resource.getMetadata().getNamespace(), resource.getMetadata().getName(),
                e.getMessage());
        SkeinConsumerGroupStatus status = resource.getStatus() == null ? new SkeinConsumerGroupStatus()
                : resource.getStatus();
        status.setConditions(Conditions.set(status.getConditions(), Conditions.READY, false, "KafkaError",
                e.getMessage(), resource.getMetadata().getGeneration(), clock.instant()));
        resource.setStatus(status);
        return ErrorStatusUpdateControl.patchStatus(resource);
    }

    @Override
    public DeleteControl cleanup(SkeinConsumerGroup resource, Context<SkeinConsumerGroup> context) {
        String ns = resource.getMetadata().getNamespace();
        String name = resource.getMetadata().getName();
        lagMetrics.remove(ns, resource.groupId());
        DeletionPolicy policy = Optional.ofNullable(resource.getSpec().getDeletionPolicy()).orElse(DeletionPolicy.Retain);
        Optional<String> bootstrap = resolver.bootstrapServers(ns, resource.getSpec().getCluster());
        if (policy == DeletionPolicy.Retain || bootstrap.isEmpty()) {
            LOG.info("SkeinConsumerGroup {}/{}: deleted; group {} left as it is", ns, name, resource.groupId());
            return DeleteControl.defaultDelete();
        }
        GroupAdmin admin = new GroupAdmin(admins.forBootstrap(bootstrap.get()), admins.timeout().toMillis());
        GroupAdmin.GroupView group = admin.describe(resource.groupId());
        if (group.members() > 0) {
            LOG.info("SkeinConsumerGroup {}/{}: group {} has {} active member(s); its offsets are deleted once it has "
                    + "none", ns, name, resource.groupId(), group.members());
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(Duration.ofSeconds(10));
        }
        if (!"Dead".equals(group.state())) {
            LOG.info("SkeinConsumerGroup {}/{}: deleting group {} (deletionPolicy Delete)", ns, name, resource.groupId());
            admin.delete(resource.groupId());
        }
        return DeleteControl.defaultDelete();
    }
}
