package io.zkcoord.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JDK Flight Recorder event {@code io.zkcoord.LockWait}: one wait for a lock, lease, permit or
 * leadership, on one path. Its duration is the wait; it is committed when the wait ends, on the
 * thread that learns of it (the waiting thread for blocking calls). Internal: the event's name and
 * fields are the contract, not this class.
 *
 * <p>Not thread-safe: each instance is begun and committed by one {@link Observer.Wait}.
 */
@Name("io.zkcoord.LockWait")
@Label("ZooKeeper Lock Wait")
@Category({"zkcoord", "Locks"})
@Description("A wait for a zkcoord lock, lease, semaphore permit or leadership; its duration is the wait")
public final class LockWaitEvent extends jdk.jfr.Event {

    @Label("Path")
    @Description("The lock path (one event per path of a multi-path lock)")
    String path;

    @Label("Recipe")
    @Description("mutex, read, write, semaphore, election or multi")
    String recipe;

    @Label("Holder")
    @Description("THREAD, LEASE or PARTICIPANT")
    String holder;

    @Label("Outcome")
    @Description("granted, timed_out, abandoned or failed")
    String outcome;

    @Label("Fencing Token")
    @Description("The hold's fencing token if granted, else 0")
    long fencingToken;

    @Label("Client")
    String client;
}
