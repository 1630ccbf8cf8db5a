package dev.skein.operator.cluster;

import dev.skein.operator.cluster.NodeLossDecision.Broker;
import dev.skein.operator.cluster.NodeLossDecision.Facts;
import dev.skein.operator.cluster.NodeLossDecision.Node;
import dev.skein.operator.cluster.NodeLossDecision.Result;
import dev.skein.operator.cluster.NodeLossDecision.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The node-loss decision table: three brokers (all voters) on nodes n0..n2 plus a spare n3, local
 * volumes, a 60 s timeout and a 1 MB/s recovery throttle unless a row says otherwise.
 */
class NodeLossDecisionTest {
    private static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Settings SETTINGS = new Settings(true, TIMEOUT, true, 1_000_000);

    /** A mutable scene, turned into {@link Facts} per row. */
    private static final class Scene {
        Instant now = T0;
        Settings settings = SETTINGS;
        Set<Integer> voters = Set.of(0, 1, 2);
        final Map<Integer, Broker> brokers = new LinkedHashMap<>();
        final Map<String, Node> nodes = new LinkedHashMap<>();
        Map<String, Instant> goneSince = Map.of();
        Optional<List<PartitionReplicas>> partitions = Optional.of(healthy());
        Optional<NodeLossProgress> progress = Optional.empty();

        Scene() {
            for (int i = 0; i < 3; i++) {
                brokers.put(i, new Broker(i, "main-broker-" + i, "pod-" + i, "n" + i, true, "data-main-broker-" + i,
                        "pvc-" + i, false, "n" + i));
            }
            for (int i = 0; i < 4; i++) {
                nodes.put("n" + i, new Node("n" + i, true, T0.minusSeconds(3600)));
            }
        }

        Scene nodeNotReady(String node, Instant since) {
            nodes.put(node, new Node(node, false, since));
            Broker b = brokerOn(node);
            if (b != null) {
                brokers.put(b.id(), new Broker(b.id(), b.podName(), b.podUid(), b.podNode(), false, b.pvcName(),
                        b.pvcUid(), b.pvcTerminating(), b.localVolumeNode()));
            }
            return this;
        }

        Scene at(Instant when) {
            now = when;
            return this;
        }

        Scene broker(Broker b) {
            brokers.put(b.id(), b);
            return this;
        }

        Broker brokerOn(String node) {
            return brokers.values().stream().filter(b -> b.node().orElse("").equals(node)).findFirst().orElse(null);
        }

        Result decide() {
            return NodeLossDecision.decide(new Facts(now, settings, voters, new ArrayList<>(brokers.values()),
                    Map.copyOf(nodes), goneSince, partitions, progress));
        }

        /** Applies a result's progress the way the reconciler does (annotation written). */
        Scene apply(Result r) {
            progress = r.next();
            return this;
        }
    }

    private static List<PartitionReplicas> healthy() {
        return List.of(new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(0, 1, 2), 2),
                new PartitionReplicas("orders", 1, List.of(1, 2, 0), List.of(1, 2, 0), 2));
    }

    /** Broker 1 out of every ISR (its node is gone and it was shrunk out). */
    private static List<PartitionReplicas> withoutBroker1() {
        return List.of(new PartitionReplicas("orders", 0, List.of(0, 1, 2), List.of(0, 2), 2),
                new PartitionReplicas("orders", 1, List.of(1, 2, 0), List.of(2, 0), 2));
    }

    private static Scene lostPastTimeout() {
        Scene s = new Scene().nodeNotReady("n1", T0.minusSeconds(61));
        s.partitions = Optional.of(withoutBroker1());
        return s;
    }

    @Test
    void noLostNodeIsHealthy() {
        Result r = new Scene().decide();

        assertThat(r.action()).isEqualTo(new NodeLossAction.Healthy());
        assertThat(r.action().degraded()).isFalse();
        assertThat(r.next()).isEmpty();
    }

    @Test
    void lostNodeWaitsForTheTimeoutAndSaysWhen() {
        Result r = new Scene().nodeNotReady("n1", T0.minusSeconds(20)).decide();

        assertThat(r.action()).isInstanceOfSatisfying(NodeLossAction.Wait.class, w -> {
            assertThat(w.reason()).isEqualTo(NodeLossReason.NodeLost);
            assertThat(w.retryAfter()).isEqualTo(Duration.ofSeconds(40));
            assertThat(w.message()).contains("n1").contains("broker 1");
        });
        assertThat(r.action().degraded()).isTrue();
        assertThat(r.next()).isEmpty();
    }

    @Test
    void nodeGoneCountsFromWhenFirstSeenGone() {
        Scene s = new Scene();
        s.nodes.remove("n1");
        s.goneSince = Map.of("n1", T0.minusSeconds(30));

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.retryAfter()).isEqualTo(Duration.ofSeconds(30)));
        s.partitions = Optional.of(withoutBroker1());
        assertThat(s.at(T0.plusSeconds(31)).decide().action()).isInstanceOf(NodeLossAction.SetThrottle.class);
    }

    @Test
    void goneSinceKeepsTheFirstSightingAndForgetsNodesThatCameBack() {
        List<Broker> brokers = new ArrayList<>(new Scene().brokers.values());
        Map<String, Instant> first = NodeLossDecision.goneSince(Map.of(), brokers, Set.of("n0", "n2"), T0);
        Map<String, Instant> later = NodeLossDecision.goneSince(first, brokers, Set.of("n0", "n2"), T0.plusSeconds(9));
        Map<String, Instant> back = NodeLossDecision.goneSince(later, brokers, Set.of("n0", "n1", "n2"), T0.plusSeconds(10));

        assertThat(first).isEqualTo(Map.of("n1", T0));
        assertThat(later).isEqualTo(Map.of("n1", T0));
        assertThat(back).isEmpty();
    }

    @Test
    void pastTheTimeoutTheReplacementStartsWithTheThrottleAndRecordsTheUids() {
        Result r = lostPastTimeout().decide();

        assertThat(r.action()).isEqualTo(new NodeLossAction.SetThrottle(1, 1_000_000,
                ((NodeLossAction.SetThrottle) r.action()).message()));
        assertThat(r.next()).contains(new NodeLossProgress(1, "n1", "pod-1", "pvc-1", NodeLossReason.ThrottleSet,
                true, T0));
    }

    @Test
    void fullReplacementStepByStepThenTheThrottleIsCleared() {
        Scene s = lostPastTimeout();
        Result throttle = s.decide();
        assertThat(throttle.action()).isInstanceOf(NodeLossAction.SetThrottle.class);

        Result pvc = s.apply(throttle).at(T0.plusSeconds(1)).decide();
        assertThat(pvc.action()).isInstanceOfSatisfying(NodeLossAction.DeletePvc.class, d -> {
            assertThat(d.name()).isEqualTo("data-main-broker-1");
            assertThat(d.uid()).isEqualTo("pvc-1");
        });

        // the claim is Terminating (pvc-protection holds it while the stuck pod exists)
        s.apply(pvc).broker(new Broker(1, "main-broker-1", "pod-1", "n1", false, "data-main-broker-1", "pvc-1", true, "n1"));
        Result pod = s.decide();
        assertThat(pod.action()).isInstanceOfSatisfying(NodeLossAction.ForceDeletePod.class, d -> {
            assertThat(d.name()).isEqualTo("main-broker-1");
            assertThat(d.uid()).isEqualTo("pod-1");
        });

        // the StatefulSet recreated the pod on the spare node with a fresh claim; not ready yet
        s.apply(pod).broker(new Broker(1, "main-broker-1", "pod-1b", "n3", false, "data-main-broker-1", "pvc-1b",
                false, "n3"));
        Result starting = s.decide();
        assertThat(starting.action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.reason()).isEqualTo(NodeLossReason.ReplacementStarting));
        assertThat(starting.next()).hasValueSatisfying(p -> assertThat(p.throttled()).isTrue());

        s.apply(starting).broker(new Broker(1, "main-broker-1", "pod-1b", "n3", true, "data-main-broker-1", "pvc-1b",
                false, "n3"));
        Result catchingUp = s.decide();
        assertThat(catchingUp.action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.reason()).isEqualTo(NodeLossReason.ReplacementCatchingUp));
        assertThat(catchingUp.action().degraded()).isTrue();

        s.apply(catchingUp).partitions = Optional.of(healthy());
        Result clear = s.decide();
        assertThat(clear.action()).isInstanceOfSatisfying(NodeLossAction.ClearThrottle.class,
                c -> assertThat(c.reason()).isEqualTo(NodeLossReason.ReplacementComplete));
        assertThat(clear.action().degraded()).isFalse();
        assertThat(clear.next()).isEmpty();

        assertThat(s.apply(clear).decide().action()).isEqualTo(new NodeLossAction.Healthy());
    }

    @Test
    void aRepeatedStepAfterAnOperatorRestartIsSkippedByWhatIsObserved() {
        // the annotation still says ThrottleSet, but the claim delete went through before the restart
        Scene s = lostPastTimeout();
        s.progress = Optional.of(new NodeLossProgress(1, "n1", "pod-1", "pvc-1", NodeLossReason.ThrottleSet, true, T0));
        s.broker(new Broker(1, "main-broker-1", "pod-1", "n1", false, "data-main-broker-1", "pvc-1", true, "n1"));

        assertThat(s.decide().action()).isInstanceOf(NodeLossAction.ForceDeletePod.class);

        // the pod was force-deleted too and replaced: never delete the new pod or claim of the same name
        s.broker(new Broker(1, "main-broker-1", "pod-1b", null, false, "data-main-broker-1", "pvc-1b", false, null));
        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.reason()).isEqualTo(NodeLossReason.ReplacementStarting));
    }

    @Test
    void withoutAThrottleTheFirstStepDeletesTheClaim() {
        Scene s = lostPastTimeout();
        s.settings = new Settings(true, TIMEOUT, true, 0);

        Result r = s.decide();

        assertThat(r.action()).isInstanceOf(NodeLossAction.DeletePvc.class);
        assertThat(r.next()).hasValueSatisfying(p -> assertThat(p.throttled()).isFalse());
    }

    @Test
    void aVolumeThatIsNotNodeLocalIsKeptAndOnlyThePodIsForceDeleted() {
        Scene s = lostPastTimeout();
        s.settings = new Settings(true, TIMEOUT, true, 0);
        s.broker(new Broker(1, "main-broker-1", "pod-1", "n1", false, "data-main-broker-1", "pvc-1", false, null));

        Result r = s.decide();

        assertThat(r.action()).isInstanceOf(NodeLossAction.ForceDeletePod.class);
        assertThat(r.next()).hasValueSatisfying(p -> assertThat(p.pvcUid()).isNull());
    }

    @Test
    void localVolumeWithoutReplaceLocalVolumesIsRefused() {
        Scene s = lostPastTimeout();
        s.settings = new Settings(true, TIMEOUT, false, 1_000_000);

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Refuse.class,
                r -> assertThat(r.reason()).isEqualTo(NodeLossReason.LocalVolumeNotReplaced));
    }

    @Test
    void disabledReplacementIsReportedNotActedOn() {
        Scene s = lostPastTimeout();
        s.settings = new Settings(false, TIMEOUT, true, 1_000_000);

        Result r = s.decide();

        assertThat(r.action()).isInstanceOfSatisfying(NodeLossAction.Refuse.class,
                x -> assertThat(x.reason()).isEqualTo(NodeLossReason.ReplacementDisabled));
        assertThat(r.next()).isEmpty();
    }

    @Test
    void twoLostNodesAreRefusedEvenPastTheTimeout() {
        Scene s = lostPastTimeout().nodeNotReady("n2", T0.minusSeconds(300));

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(NodeLossReason.MultipleNodesLost);
            assertThat(r.message()).contains("n1").contains("n2");
        });
    }

    @Test
    void aLostNodeWithoutBrokersIsIgnored() {
        assertThat(new Scene().nodeNotReady("n3", T0.minusSeconds(600)).decide().action())
                .isEqualTo(new NodeLossAction.Healthy());
    }

    @Test
    void aLostVoterIsNotReplacedWhenTheOtherReadyVotersAreNoMajority() {
        Scene s = lostPastTimeout();
        // voter 2 is restarting: only voter 0 is ready besides the lost voter 1
        s.broker(new Broker(2, "main-broker-2", "pod-2", "n2", false, "data-main-broker-2", "pvc-2", false, "n2"));

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(NodeLossReason.QuorumAtRisk);
            assertThat(r.message()).contains("[0]");
        });
    }

    @Test
    void aLostBrokerThatIsNoVoterWaitsForAnotherBrokerNotReady() {
        Scene s = lostPastTimeout();
        s.voters = Set.of(0);
        s.broker(new Broker(2, "main-broker-2", "pod-2", "n2", false, "data-main-broker-2", "pvc-2", false, "n2"));

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.reason()).isEqualTo(NodeLossReason.BrokerNotReady));
    }

    @Test
    void theOnlyInSyncReplicaOnTheLostBrokerIsNeverDeleted() {
        Scene s = lostPastTimeout();
        s.partitions = Optional.of(List.of(new PartitionReplicas("solo", 0, List.of(1), List.of(1), 1)));

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Refuse.class, r -> {
            assertThat(r.reason()).isEqualTo(NodeLossReason.DataOnlyOnLostBroker);
            assertThat(r.message()).contains("solo-0");
        });
    }

    @Test
    void anUnreachableClusterDeletesNothing() {
        Scene s = lostPastTimeout();
        s.partitions = Optional.empty();

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.reason()).isEqualTo(NodeLossReason.ClusterUnreachable));
    }

    @Test
    void aPendingPodIsPlacedOnTheNodeOfItsLocalVolume() {
        // the node was deleted: PodGC removed the pod, the StatefulSet recreated it, it cannot schedule
        Scene s = new Scene();
        s.nodes.remove("n1");
        s.goneSince = Map.of("n1", T0.minusSeconds(120));
        s.partitions = Optional.of(withoutBroker1());
        s.settings = new Settings(true, TIMEOUT, true, 0);
        s.broker(new Broker(1, "main-broker-1", "pod-1p", null, false, "data-main-broker-1", "pvc-1", false, "n1"));

        Result r = s.decide();

        assertThat(r.action()).isInstanceOf(NodeLossAction.DeletePvc.class);
        assertThat(r.next()).hasValueSatisfying(p -> assertThat(p.podUid()).isEqualTo("pod-1p"));
    }

    @Test
    void theNodeComingBackBeforeAnyDeleteCallsTheReplacementOffAndClearsTheThrottle() {
        Scene s = lostPastTimeout();
        Result throttle = s.decide();
        s.apply(throttle).nodes.put("n1", new Node("n1", true, T0.plusSeconds(2)));

        Result r = s.decide();

        assertThat(r.action()).isInstanceOfSatisfying(NodeLossAction.ClearThrottle.class,
                c -> assertThat(c.reason()).isEqualTo(NodeLossReason.NodeRecovered));
        assertThat(r.next()).isEmpty();
    }

    @Test
    void aReplacementUnderWayIsFinishedBeforeAnotherLostNodeIsLookedAt() {
        Scene s = lostPastTimeout();
        s.progress = Optional.of(new NodeLossProgress(1, "n1", "pod-1", "pvc-1", NodeLossReason.PodForceDeleted, true, T0));
        s.broker(new Broker(1, "main-broker-1", "pod-1b", "n3", false, "data-main-broker-1", "pvc-1b", false, "n3"));
        s.nodeNotReady("n2", T0.minusSeconds(600));

        assertThat(s.decide().action()).isInstanceOfSatisfying(NodeLossAction.Wait.class,
                w -> assertThat(w.reason()).isEqualTo(NodeLossReason.ReplacementStarting));
    }

    @Test
    void progressAnnotationRoundTripsAndABadOneNamesItself() {
        NodeLossProgress p = new NodeLossProgress(1, "skein-node-2", "u-1", null, NodeLossReason.VolumeDeleted, true, T0);

        assertThat(NodeLossProgress.parse(p.format())).isEqualTo(p);
        assertThat(p.format()).isEqualTo("broker=1;node=skein-node-2;pod=u-1;step=VolumeDeleted;throttled=true;"
                + "started=2026-11-29T12:00:00Z");
        assertThatThrownBy(() -> NodeLossProgress.parse("broker=x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(NodeLossProgress.ANNOTATION);
    }
}
