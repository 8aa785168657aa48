package io.zkcoord.group;

import io.zkcoord.CoordinationException;

/**
 * A member with the same id is already in the group, held by another ZooKeeper session: two
 * processes were given one id, or a restarted process joined before its previous session expired
 * (its node goes with that session, at most one session timeout later).
 */
public class DuplicateMemberException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what was refused, naming the group and the id
     */
    public DuplicateMemberException(String message) {
        super(message);
    }
}
