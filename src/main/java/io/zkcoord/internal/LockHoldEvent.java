package io.zkcoord.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JDK Flight Recorder event {@code io.zkcoord.LockHold}: one hold of a lock, lease, permit or
 * leadership, on one path. Its duration is the hold; it is committed when the hold ends (released or
 * lost). Internal: the event's name and fields are the contract, not this class.
 *
 * <p>Not thread-safe: each instance is begun and committed by one {@link Observer.Held}.
 */
@Name("io.zkcoord.LockHold")
@Label("ZooKeeper Lock Hold")
@Category({"zkcoord", "Locks"})
@Description("A hold of a zkcoord lock, lease, semaphore permit or leadership; its duration is the hold")
public final class LockHoldEvent extends jdk.jfr.Event {

    @Label("Path")
    @Description("The lock path (one event per path of a multi-path lock)")
    String path;

    @Label("Recipe")
    @Description("mutex, read, write, semaphore, election or multi")
    String recipe;

    @Label("Holder")
    @Description("THREAD, LEASE or PARTICIPANT")
    String holder;

    @Label("Fencing Token")
    @Description("The hold's fencing token (for an election, its epoch)")
    long token;

    @Label("Lost")
    @Description("true if the hold ended with its session, false if released")
    boolean lost;

    @Label("Client")
    String client;
}
