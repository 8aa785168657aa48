package io.zkcoord.election;

/**
 * One participant of an election as read from ZooKeeper.
 *
 * @param id the participant id it joined with
 * @param epoch the {@code czxid} of its node: its epoch if it leads
 * @param leader true for the participant whose node is first in the queue
 */
public record Participant(String id, long epoch, boolean leader) {
}
