package dev.skein.broker.coordinator;

import java.util.EnumSet;
import java.util.Set;

/**
 * The states of a classic group and the only legal transitions between them. Only
 * {@link ClassicGroup#transitionTo} changes a group's state, and it enforces this table:
 *
 * <pre>
 * Empty               -> PreparingRebalance (a member joins), Dead (group deleted or expired)
 * PreparingRebalance  -> CompletingRebalance (join phase done with members), Empty (done with none),
 *                        Dead (group deleted)
 * CompletingRebalance -> Stable (leader's assignment stored), PreparingRebalance (member joins,
 *                        leaves, fails or changes metadata), Dead
 * Stable              -> PreparingRebalance (member joins with new metadata, leader rejoins, member
 *                        leaves or fails), Dead
 * Dead                -> (terminal: the group is removed from the coordinator)
 * </pre>
 *
 * A group is created in Empty, or in Stable when it is restored from the log with members.
 */
public enum GroupState {
    EMPTY("Empty"),
    PREPARING_REBALANCE("PreparingRebalance"),
    COMPLETING_REBALANCE("CompletingRebalance"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String wireName;

    GroupState(String wireName) {
        this.wireName = wireName;
    }

    /** The name Kafka's DescribeGroups and ListGroups use for this state. */
    public String wireName() {
        return wireName;
    }

    /** The states this state may be entered from. */
    public Set<GroupState> validPreviousStates() {
        return switch (this) {
            case EMPTY -> EnumSet.of(PREPARING_REBALANCE);
            case PREPARING_REBALANCE -> EnumSet.of(EMPTY, COMPLETING_REBALANCE, STABLE);
            case COMPLETING_REBALANCE -> EnumSet.of(PREPARING_REBALANCE);
            case STABLE -> EnumSet.of(COMPLETING_REBALANCE);
            case DEAD -> EnumSet.of(EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD);
        };
    }

    /** Parses a wire name case-insensitively, or returns null. */
    public static GroupState fromWireName(String name) {
        for (GroupState s : values()) {
            if (s.wireName.equalsIgnoreCase(name)) {
                return s;
            }
        }
        return null;
    }
}
