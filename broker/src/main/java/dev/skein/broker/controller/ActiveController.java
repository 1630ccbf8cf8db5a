package dev.skein.broker.controller;

import dev.skein.broker.config.ConfigOp;
import dev.skein.broker.config.DynamicBrokerConfigs;
import dev.skein.broker.config.TopicConfigs;
import dev.skein.broker.metadata.ClusterImage;
import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.metadata.TopicMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.EligibleLeadersNotAvailableException;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.PreferredLeaderNotAvailableException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.utils.Time;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * The decisions of the active controller, as pure functions of the current {@link MetadataState}
 * plus what only the active controller keeps in memory: when each broker last heartbeat, which
 * brokers are shutting down, a seeded {@link Random} for placement and an injected {@link Time}.
 * Each method validates a request and returns the commands to propose (or throws Kafka's
 * {@link org.apache.kafka.common.errors.ApiException}, and nothing is proposed). It is not
 * thread-safe: the controller calls it from one thread.
 *
 * <p>Leadership rules: a leader is elected from the ISR members that are live (registered, not
 * fenced) and not shutting down, in replica order; with none, the partition has no leader
 * ({@link PartitionRegistration#NO_LEADER}) unless the topic allows unclean election, which picks
 * the first live replica and makes it the whole ISR. A fenced broker leaves every ISR except one it
 * is the last member of (it still holds the data); a broker back with a new incarnation (an empty
 * disk) leaves every ISR.
 */
public final class ActiveController {
    public static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

    private final Time time;
    private final Random random;
    private final long sessionTimeoutMs;
    private final Map<String, String> topicDefaults;
    private final Map<Integer, Long> lastHeartbeatMs = new HashMap<>();
    private final Set<Integer> shuttingDown = new HashSet<>();

    public ActiveController(Time time, Random random, long sessionTimeoutMs, Map<String, String> topicDefaults) {
        this.time = time;
        this.random = random;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.topicDefaults = Map.copyOf(topicDefaults);
    }

    /** This node just became the active controller: every registered broker gets a fresh session. */
    public void becameActive(MetadataState state) {
        lastHeartbeatMs.clear();
        shuttingDown.clear();
        long now = time.milliseconds();
        state.brokers().keySet().forEach(id -> lastHeartbeatMs.put(id, now));
    }

    public List<MetadataCommand> createTopic(MetadataState s, String name, int partitions, short replicationFactor,
                                             Map<String, String> configs) {
        List<BrokerRegistration> live = placeable(s);
        TopicRules.checkNewTopic(name, s.topics().keySet(), partitions, replicationFactor, live.size(), configs);
        checkMinIsr(configs, replicationFactor);
        return List.of(new MetadataCommand.CreateTopic(name, newTopicId(s),
                ReplicaPlacer.place(live, 0, partitions, replicationFactor, random), configs));
    }

    private Uuid newTopicId(MetadataState s) {
        Uuid id = new Uuid(random.nextLong(), random.nextLong());
        while (id.equals(Uuid.ZERO_UUID) || id.equals(Uuid.METADATA_TOPIC_ID) || s.topic(id) != null) {
            id = new Uuid(random.nextLong(), random.nextLong());
        }
        return id;
    }

    /** A topic with the replicas of each partition given; each broker named must be registered and unfenced. */
    public List<MetadataCommand> createTopic(MetadataState s, String name, List<List<Integer>> assignment,
                                             Map<String, String> configs) {
        if (assignment.isEmpty()) {
            throw new InvalidReplicaAssignmentException("The manual partition assignment of " + name + " is empty.");
        }
        int replicationFactor = assignment.getFirst().size();
        TopicRules.checkNewTopic(name, s.topics().keySet(), assignment.size(), (short) replicationFactor,
                placeable(s).size(), configs);
        checkMinIsr(configs, replicationFactor);
        checkManualAssignment(s, assignment, replicationFactor);
        return List.of(new MetadataCommand.CreateTopic(name, newTopicId(s), assignment, configs));
    }

    public List<MetadataCommand> deleteTopic(MetadataState s, Uuid topicId) {
        if (s.topic(topicId) == null) {
            throw new UnknownTopicIdException("Topic id " + topicId + " not found.");
        }
        return List.of(new MetadataCommand.DeleteTopic(topicId));
    }

    public List<MetadataCommand> createPartitions(MetadataState s, String topic, int newCount) {
        TopicMetadata t = TopicRules.checkPartitionIncrease(s.topic(topic), newCount);
        int rf = t.partition(0).replicas().size();
        List<BrokerRegistration> live = placeable(s);
        TopicRules.checkReplicationFactor(rf, live.size());
        return List.of(new MetadataCommand.CreatePartitions(t.id(), t.partitionCount(),
                ReplicaPlacer.place(live, t.partitionCount(), newCount - t.partitionCount(), rf, random)));
    }

    /** New partitions with their replicas given, as many as the increase (Kafka's CreatePartitions assignments). */
    public List<MetadataCommand> createPartitions(MetadataState s, String topic, int newCount,
                                                  List<List<Integer>> newAssignment) {
        TopicMetadata t = TopicRules.checkPartitionIncrease(s.topic(topic), newCount);
        if (newAssignment.size() != newCount - t.partitionCount()) {
            throw new InvalidReplicaAssignmentException("Increasing the number of partitions by "
                    + (newCount - t.partitionCount()) + " but " + newAssignment.size() + " assignments provided.");
        }
        checkManualAssignment(s, newAssignment, t.partition(0).replicas().size());
        return List.of(new MetadataCommand.CreatePartitions(t.id(), t.partitionCount(), newAssignment));
    }

    private void checkManualAssignment(MetadataState s, List<List<Integer>> assignment, int replicationFactor) {
        for (List<Integer> replicas : assignment) {
            if (replicas.size() != replicationFactor) {
                throw new InvalidReplicaAssignmentException("All partitions should have the same number of replicas ("
                        + replicationFactor + "), not " + replicas);
            }
            if (new java.util.HashSet<>(replicas).size() != replicas.size()) {
                throw new InvalidReplicaAssignmentException("Duplicate replica assignment found: " + replicas);
            }
            for (int id : replicas) {
                BrokerRegistration b = s.brokers().get(id);
                if (b == null) {
                    throw new InvalidReplicaAssignmentException("The manual partition assignment includes broker " + id
                            + ", but no such broker is registered.");
                }
                if (b.fenced()) {
                    throw new InvalidReplicaAssignmentException("The manual partition assignment includes broker " + id
                            + ", which is fenced.");
                }
            }
        }
    }

    public List<MetadataCommand> alterTopicConfigs(MetadataState s, String topic, Map<String, String> configs) {
        TopicMetadata t = s.topic(topic);
        if (t == null) {
            throw new UnknownTopicOrPartitionException("The topic '" + topic + "' does not exist.");
        }
        TopicConfigs.validate(configs);
        int rf = t.partitions().stream().mapToInt(p -> p.replicas().size()).min().orElse(1);
        checkMinIsr(configs, rf);
        return List.of(new MetadataCommand.AlterTopicConfigs(t.id(), configs));
    }

    /** The topic's overrides after {@code ops}, applied to its overrides in {@code s}, validated. */
    public List<MetadataCommand> incrementalAlterTopicConfigs(MetadataState s, String topic, List<ConfigOp> ops) {
        TopicMetadata t = s.topic(topic);
        if (t == null) {
            throw new UnknownTopicOrPartitionException("The topic '" + topic + "' does not exist.");
        }
        return alterTopicConfigs(s, topic, ConfigOp.applyAll(t.configs(), ops));
    }

    /** The dynamic overrides of a broker or of the cluster default after {@code ops}, applied to those in {@code s}. */
    public List<MetadataCommand> incrementalAlterBrokerConfigs(MetadataState s, String resource, List<ConfigOp> ops) {
        DynamicBrokerConfigs.validateResource(resource);
        return alterBrokerConfigs(s, resource,
                ConfigOp.applyAll(s.brokerConfigs().getOrDefault(resource, Map.of()), ops));
    }

    /** Dynamic broker config overrides of one broker or of the cluster default, validated. */
    public List<MetadataCommand> alterBrokerConfigs(MetadataState s, String resource, Map<String, String> configs) {
        DynamicBrokerConfigs.validateResource(resource);
        DynamicBrokerConfigs.validate(configs);
        return List.of(new MetadataCommand.AlterBrokerConfigs(resource, configs));
    }

    /**
     * A broker (re-)registers: it is fenced until its first heartbeat. Partitions it led move to
     * another live ISR member (its restart lost its leader state); with a new incarnation it also
     * leaves every ISR.
     */
    public List<MetadataCommand> registerBroker(MetadataState s, ClusterImage.BrokerInfo broker) {
        if (broker.id() < 0) {
            throw new InvalidRequestException("Invalid broker id " + broker.id());
        }
        BrokerRegistration previous = s.broker(broker.id());
        boolean newIncarnation = previous != null && !previous.incarnation().equals(broker.incarnation());
        List<MetadataCommand> out = new ArrayList<>();
        out.add(new MetadataCommand.RegisterBroker(broker.id(), broker.host(), broker.port(), broker.rack(),
                broker.incarnation()));
        MetadataState next = s.apply(out, Long.MAX_VALUE).state();
        out.addAll(moveAway(next, broker.id(), newIncarnation));
        lastHeartbeatMs.put(broker.id(), time.milliseconds());
        shuttingDown.remove(broker.id());
        return out;
    }

    /** Records a heartbeat; returns the commands it causes (unfencing, controlled-shutdown moves). */
    public List<MetadataCommand> heartbeat(MetadataState s, int brokerId, long brokerEpoch, boolean wantShutdown) {
        BrokerRegistration b = s.broker(brokerId);
        if (b == null) {
            throw new BrokerIdNotRegisteredException("Broker " + brokerId + " is not registered.");
        }
        if (b.epoch() != brokerEpoch) {
            throw new StaleBrokerEpochException("Broker " + brokerId + " is at epoch " + b.epoch() + ", not " + brokerEpoch);
        }
        lastHeartbeatMs.put(brokerId, time.milliseconds());
        List<MetadataCommand> out = new ArrayList<>();
        if (wantShutdown) {
            shuttingDown.add(brokerId);
            out.addAll(moveAway(s, brokerId, false));
            MetadataState next = s.apply(out, Long.MAX_VALUE).state();
            if (!b.fenced() && leadsNothing(next, brokerId)) {
                out.add(new MetadataCommand.FenceBroker(brokerId, brokerEpoch));
            }
        } else if (b.fenced()) {
            out.add(new MetadataCommand.UnfenceBroker(brokerId, brokerEpoch));
            out.addAll(electOfflineLeaders(s.apply(out, Long.MAX_VALUE).state()));
        }
        return out;
    }

    /** The heartbeat's answer, from the state after the heartbeat's commands were applied. */
    public BrokerHeartbeat heartbeatReply(MetadataState s, int brokerId, boolean wantShutdown) {
        BrokerRegistration b = s.broker(brokerId);
        boolean fenced = b == null || b.fenced();
        return new BrokerHeartbeat(fenced, wantShutdown && leadsNothing(s, brokerId));
    }

    /** Fences every live broker whose last heartbeat is older than the session timeout, moving its leaderships. */
    public List<MetadataCommand> fenceExpiredBrokers(MetadataState s) {
        long now = time.milliseconds();
        List<MetadataCommand> out = new ArrayList<>();
        MetadataState next = s;
        for (BrokerRegistration b : s.brokers().values()) {
            long last = lastHeartbeatMs.computeIfAbsent(b.id(), id -> now);
            if (!b.fenced() && now - last > sessionTimeoutMs) {
                List<MetadataCommand> fence = new ArrayList<>();
                fence.add(new MetadataCommand.FenceBroker(b.id(), b.epoch()));
                next = next.apply(fence, Long.MAX_VALUE).state();
                List<MetadataCommand> moves = moveAway(next, b.id(), false);
                next = next.apply(moves, Long.MAX_VALUE).state();
                out.addAll(fence);
                out.addAll(moves);
            }
        }
        return out;
    }

    /**
     * The leader's change of a partition's ISR (compare-and-set on leader epoch and partition epoch).
     */
    public List<MetadataCommand> alterPartition(MetadataState s, TopicPartition tp, int leaderId, int leaderEpoch,
                                                int partitionEpoch, List<Integer> newIsr) {
        TopicMetadata t = s.topic(tp.topic());
        PartitionRegistration p = t == null ? null : t.partition(tp.partition());
        if (p == null) {
            throw new UnknownTopicOrPartitionException("Unknown partition " + tp);
        }
        if (leaderId != p.leader() || leaderEpoch != p.leaderEpoch()) {
            throw new FencedLeaderEpochException("Partition " + tp + " is led by " + p.leader() + " in epoch "
                    + p.leaderEpoch() + ", not by " + leaderId + " in epoch " + leaderEpoch);
        }
        if (partitionEpoch != p.partitionEpoch()) {
            throw new InvalidUpdateVersionException("Partition " + tp + " is at partition epoch " + p.partitionEpoch()
                    + ", not " + partitionEpoch);
        }
        if (newIsr.isEmpty() || !newIsr.contains(leaderId) || newIsr.stream().distinct().count() != newIsr.size()) {
            throw new InvalidRequestException("The ISR " + newIsr + " of " + tp + " must contain the leader " + leaderId
                    + " once and no duplicates");
        }
        for (int r : newIsr) {
            if (!p.replicas().contains(r)) {
                throw new InvalidRequestException("Broker " + r + " is not a replica of " + tp + ": " + p.replicas());
            }
            if (!s.isLive(r)) {
                throw new InvalidRequestException("Broker " + r + " in the new ISR of " + tp + " is fenced or unknown");
            }
        }
        List<MetadataCommand> out = new ArrayList<>();
        out.add(new MetadataCommand.ChangePartition(t.id(), tp.partition(), p.partitionEpoch(), p.leader(),
                p.leaderEpoch(), newIsr));
        // an ISR expansion is what a reassignment waits for: complete it in the same log entry
        PartitionRegistration changed = s.apply(out, Long.MAX_VALUE).state().topic(t.id()).partition(tp.partition());
        completion(s, changed).ifPresent(done -> out.add(reassign(t, tp.partition(), changed, done)));
        return out;
    }

    // ---- partition reassignment (AlterPartitionReassignments) ----

    /**
     * Starts, replaces or cancels ({@code target} null) the reassignment of one partition, as Kafka
     * does: the replicas become {@code target} followed by the replicas being removed, the replicas
     * of {@code target} not yet placed are "adding" (they start fetching), the others "removing".
     * A new target replaces a reassignment in progress as if it were cancelled first. A reassignment
     * whose adding replicas are already in sync (only removals) completes in the same step. Returns
     * no commands when nothing changes.
     */
    public List<MetadataCommand> alterPartitionReassignment(MetadataState s, TopicPartition tp, List<Integer> target) {
        TopicMetadata t = s.topic(tp.topic());
        PartitionRegistration p = t == null ? null : t.partition(tp.partition());
        if (p == null) {
            throw new UnknownTopicOrPartitionException("Unknown partition " + tp);
        }
        if (target == null) {
            if (!Reassignments.inProgress(p)) {
                throw new NoReassignmentInProgressException("No reassignment of " + tp + " is in progress.");
            }
            return List.of(reassign(t, tp.partition(), p, revert(s, p)));
        }
        if (target.isEmpty()) {
            throw new InvalidReplicaAssignmentException("The replica assignment of " + tp + " is empty.");
        }
        Set<Integer> seen = new HashSet<>();
        for (int b : target) {
            if (!seen.add(b)) {
                throw new InvalidReplicaAssignmentException("Broker " + b + " appears more than once in the replica "
                        + "assignment " + target + " of " + tp + ".");
            }
            if (s.broker(b) == null) {
                throw new InvalidReplicaAssignmentException("Broker " + b + " in the replica assignment " + target
                        + " of " + tp + " is not a registered broker.");
            }
        }
        PartitionRegistration base = Reassignments.inProgress(p) ? revert(s, p) : p;
        PartitionRegistration next = Reassignments.start(base, target);
        next = completion(s, next).orElse(next);
        if (Reassignments.sameAssignment(next, p)) {
            return List.of();
        }
        return List.of(reassign(t, tp.partition(), p, next));
    }

    /** Completes every reassignment whose adding replicas have all joined the ISR. */
    public List<MetadataCommand> completeReassignments(MetadataState s) {
        List<MetadataCommand> out = new ArrayList<>();
        for (TopicMetadata t : s.topics().values()) {
            for (int i = 0; i < t.partitionCount(); i++) {
                PartitionRegistration p = t.partition(i);
                int partition = i;
                completion(s, p).ifPresent(done -> out.add(reassign(t, partition, p, done)));
            }
        }
        return out;
    }

    /**
     * The registration that completes {@code p}'s reassignment, if its adding replicas are all in
     * sync: replicas = target (as requested), ISR = ISR ∩ target, adding and removing cleared; a
     * leader being removed hands over to the first target replica that is live and in the new ISR
     * (leader epoch + 1). Empty while the reassignment must wait (nothing to complete, a replica
     * still catching up, or no live in-sync target replica to lead).
     */
    Optional<PartitionRegistration> completion(MetadataState s, PartitionRegistration p) {
        if (!Reassignments.inProgress(p) || !p.isr().containsAll(p.addingReplicas())) {
            return Optional.empty();
        }
        List<Integer> target = Reassignments.target(p);
        List<Integer> isr = p.isr().stream().filter(target::contains).toList();
        if (isr.isEmpty()) {
            return Optional.empty();
        }
        int leader = p.leader();
        int leaderEpoch = p.leaderEpoch();
        if (!target.contains(leader)) {
            leader = target.stream().filter(r -> isr.contains(r) && eligible(s, r)).findFirst()
                    .orElse(PartitionRegistration.NO_LEADER);
            if (leader == PartitionRegistration.NO_LEADER) {
                return Optional.empty();
            }
            leaderEpoch++;
        }
        return Optional.of(new PartitionRegistration(target, isr, leader, leaderEpoch, p.partitionEpoch(),
                List.of(), List.of()));
    }

    /**
     * The registration of a cancelled reassignment: the original replicas (without the adding
     * ones), the ISR restricted to them and a leader among them. If every in-sync replica was being
     * added, the first original replica becomes the ISR (an unclean choice, as in Kafka).
     */
    private PartitionRegistration revert(MetadataState s, PartitionRegistration p) {
        List<Integer> original = Reassignments.original(p);
        List<Integer> isr = p.isr().stream().filter(original::contains).toList();
        if (isr.isEmpty()) {
            isr = List.of(original.getFirst());
        }
        int leader = p.leader();
        if (!isr.contains(leader)) {
            List<Integer> inSync = isr;
            leader = original.stream().filter(r -> inSync.contains(r) && eligible(s, r)).findFirst()
                    .orElse(PartitionRegistration.NO_LEADER);
        }
        int leaderEpoch = leader == p.leader() ? p.leaderEpoch() : p.leaderEpoch() + 1;
        return new PartitionRegistration(original, isr, leader, leaderEpoch, p.partitionEpoch(), List.of(), List.of());
    }

    private static MetadataCommand reassign(TopicMetadata t, int partition, PartitionRegistration current,
                                            PartitionRegistration next) {
        return new MetadataCommand.ReassignPartition(t.id(), partition, current.partitionEpoch(), next.replicas(),
                next.isr(), next.leader(), next.leaderEpoch(), next.addingReplicas(), next.removingReplicas());
    }

    // ---- leader election on request (ElectLeaders) ----

    /**
     * Elects a leader of one partition on request. PREFERRED moves leadership to the first replica
     * if it is live and in sync; UNCLEAN gives a partition without a live leader one from the live
     * ISR, or else any live replica (which becomes the whole ISR), whatever the topic's
     * {@code unclean.leader.election.enable}.
     *
     * @throws ElectionNotNeededException if the preferred replica leads already (PREFERRED) or a live leader exists (UNCLEAN)
     * @throws PreferredLeaderNotAvailableException if the preferred replica is not live and in sync
     * @throws EligibleLeadersNotAvailableException if no replica is live (UNCLEAN)
     */
    public List<MetadataCommand> electLeader(MetadataState s, ElectionType type, TopicPartition tp) {
        TopicMetadata t = s.topic(tp.topic());
        PartitionRegistration p = t == null ? null : t.partition(tp.partition());
        if (p == null) {
            throw new UnknownTopicOrPartitionException("Unknown partition " + tp);
        }
        if (type == ElectionType.PREFERRED) {
            int preferred = p.replicas().getFirst();
            if (p.leader() == preferred) {
                throw new ElectionNotNeededException("Broker " + preferred + ", the preferred replica of " + tp
                        + ", leads it already.");
            }
            if (!p.isr().contains(preferred) || !eligible(s, preferred)) {
                throw new PreferredLeaderNotAvailableException("The preferred replica " + preferred + " of " + tp
                        + " is not live and in sync (ISR " + p.isr() + ").");
            }
            return List.of(new MetadataCommand.ChangePartition(t.id(), tp.partition(), p.partitionEpoch(), preferred,
                    p.leaderEpoch() + 1, p.isr()));
        }
        if (p.hasLeader() && eligible(s, p.leader())) {
            throw new ElectionNotNeededException("Broker " + p.leader() + " leads " + tp + " and is live.");
        }
        for (int r : p.replicas()) {
            if (p.isr().contains(r) && eligible(s, r)) {
                return List.of(new MetadataCommand.ChangePartition(t.id(), tp.partition(), p.partitionEpoch(), r,
                        p.leaderEpoch() + 1, p.isr()));
            }
        }
        for (int r : p.replicas()) {
            if (eligible(s, r)) {
                return List.of(new MetadataCommand.ChangePartition(t.id(), tp.partition(), p.partitionEpoch(), r,
                        p.leaderEpoch() + 1, List.of(r)));
            }
        }
        throw new EligibleLeadersNotAvailableException("No replica of " + tp + " " + p.replicas() + " is live.");
    }

    /** Moves leadership back to each partition's preferred replica where it is live and in sync. */
    public List<MetadataCommand> preferredLeaderElections(MetadataState s) {
        List<MetadataCommand> out = new ArrayList<>();
        for (TopicMetadata t : s.topics().values()) {
            for (int i = 0; i < t.partitionCount(); i++) {
                PartitionRegistration p = t.partition(i);
                int preferred = p.replicas().getFirst();
                if (p.leader() != preferred && p.isr().contains(preferred) && eligible(s, preferred)) {
                    out.add(new MetadataCommand.ChangePartition(t.id(), i, p.partitionEpoch(), preferred,
                            p.leaderEpoch() + 1, p.isr()));
                }
            }
        }
        return out;
    }

    /** Gives a leader to partitions without one, from the live ISR (or any live replica if unclean election is on). */
    public List<MetadataCommand> electOfflineLeaders(MetadataState s) {
        List<MetadataCommand> out = new ArrayList<>();
        for (TopicMetadata t : s.topics().values()) {
            for (int i = 0; i < t.partitionCount(); i++) {
                PartitionRegistration p = t.partition(i);
                if (p.hasLeader()) {
                    continue;
                }
                Election e = elect(s, t, p, p.isr(), -1);
                if (e.leader() != PartitionRegistration.NO_LEADER) {
                    out.add(new MetadataCommand.ChangePartition(t.id(), i, p.partitionEpoch(), e.leader(),
                            p.leaderEpoch() + 1, e.isr()));
                }
            }
        }
        return out;
    }

    /**
     * Takes {@code brokerId} out of leadership and out of the ISRs; it stays the last ISR member of a
     * partition with no other (it still has the data) unless {@code evenIfLastInIsr}.
     */
    List<MetadataCommand> moveAway(MetadataState s, int brokerId, boolean evenIfLastInIsr) {
        List<MetadataCommand> out = new ArrayList<>();
        for (TopicMetadata t : s.topics().values()) {
            for (int i = 0; i < t.partitionCount(); i++) {
                PartitionRegistration p = t.partition(i);
                boolean leads = p.leader() == brokerId;
                if (!leads && !p.isr().contains(brokerId)) {
                    continue;
                }
                List<Integer> isr = new ArrayList<>(p.isr());
                isr.remove(Integer.valueOf(brokerId));
                if (isr.isEmpty() && !evenIfLastInIsr) {
                    isr = List.of(brokerId);
                }
                int leader = p.leader();
                int leaderEpoch = p.leaderEpoch();
                if (leads) {
                    Election e = elect(s, t, p, isr, brokerId);
                    leader = e.leader();
                    isr = e.isr();
                    leaderEpoch++;
                }
                if (leader == p.leader() && isr.equals(p.isr())) {
                    continue;
                }
                out.add(new MetadataCommand.ChangePartition(t.id(), i, p.partitionEpoch(), leader, leaderEpoch, isr));
            }
        }
        return out;
    }

    private record Election(int leader, List<Integer> isr) {
    }

    private Election elect(MetadataState s, TopicMetadata t, PartitionRegistration p, List<Integer> isr, int excluded) {
        for (int r : p.replicas()) {
            if (r != excluded && isr.contains(r) && eligible(s, r)) {
                return new Election(r, isr);
            }
        }
        if (uncleanElection(t)) {
            for (int r : p.replicas()) {
                if (r != excluded && eligible(s, r)) {
                    return new Election(r, List.of(r));
                }
            }
        }
        return new Election(PartitionRegistration.NO_LEADER, isr);
    }

    private boolean eligible(MetadataState s, int brokerId) {
        return s.isLive(brokerId) && !shuttingDown.contains(brokerId);
    }

    private boolean uncleanElection(TopicMetadata t) {
        String v = t.configs().getOrDefault(UNCLEAN_LEADER_ELECTION_ENABLE,
                topicDefaults.getOrDefault(UNCLEAN_LEADER_ELECTION_ENABLE, "false"));
        return Boolean.parseBoolean(v.trim());
    }

    private static boolean leadsNothing(MetadataState s, int brokerId) {
        for (TopicMetadata t : s.topics().values()) {
            for (PartitionRegistration p : t.partitions()) {
                if (p.leader() == brokerId) {
                    return false;
                }
            }
        }
        return true;
    }

    private List<BrokerRegistration> placeable(MetadataState s) {
        return s.brokers().values().stream().filter(b -> !b.fenced() && !shuttingDown.contains(b.id())).toList();
    }

    private static void checkMinIsr(Map<String, String> configs, int replicationFactor) {
        String minIsr = configs.get(MIN_INSYNC_REPLICAS);
        if (minIsr != null && Integer.parseInt(minIsr.trim()) > replicationFactor) {
            throw new InvalidConfigurationException("min.insync.replicas " + minIsr.trim()
                    + " is larger than the replication factor " + replicationFactor + ".");
        }
    }
}
