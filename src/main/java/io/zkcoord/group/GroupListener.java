package io.zkcoord.group;

import java.util.List;

/**
 * Hears a {@link ZkGroup}'s membership change. Called one at a time, in order, on a library thread
 * (never ZooKeeper's); it must be quick. Whatever it throws is logged and the other listeners are
 * still told.
 */
@FunctionalInterface
public interface GroupListener {

    /**
     * @param members the group's new view: every live member, in join order (unmodifiable)
     */
    void membersChanged(List<Member> members);
}
