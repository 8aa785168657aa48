package io.zkcoord.retry;

import io.zkcoord.CoordinationException;
import io.zkcoord.SessionLostException;
import io.zkcoord.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where zkcoord runs a ZooKeeper call under a {@link RetryPolicy}.
 *
 * <ul>
 *   <li>{@code CONNECTIONLOSS}, {@code OPERATIONTIMEOUT} and {@code SESSIONMOVED} are passing: the
 *       call is tried again after the policy's delay, while the ZooKeeper client reconnects in the
 *       background.
 *   <li>{@code SESSIONEXPIRED} is final for a call pinned to one session ({@link #run}): it throws
 *       {@link SessionLostException}, because a call that depended on the old session cannot be
 *       completed in a new one. A call that may run on any session ({@link #runOnAnySession})
 *       treats it as passing: the next try goes to the handle of the session built meanwhile.
 *   <li>Any other {@link KeeperException} ({@code NONODE}, {@code NODEEXISTS}, ...) is the answer of
 *       the ensemble and is rethrown as it is, for the caller to interpret.
 *   <li>When the policy gives up it throws {@link CoordinationException} naming the path, with the
 *       last {@link KeeperException} as its cause.
 * </ul>
 * Sleeps between tries are interruptible; an interrupt ends the loop with {@link
 * InterruptedException} and is never swallowed.
 *
 * <p>Immutable and thread-safe: one loop serves every call of a client.
 */
public final class RetryLoop {

    private static final Logger log = LoggerFactory.getLogger(RetryLoop.class);

    private final RetryPolicy policy;
    private final Clock clock;

    /**
     * @param policy decides whether and when to try again
     * @param clock measures elapsed time and sleeps between tries
     */
    public RetryLoop(RetryPolicy policy, Clock clock) {
        if (policy == null || clock == null) {
            throw new IllegalArgumentException("policy and clock are required");
        }
        this.policy = policy;
        this.clock = clock;
    }

    /** @return the policy this loop follows */
    public RetryPolicy policy() {
        return policy;
    }

    /**
     * Runs {@code call} against the handle that {@code handle} supplies at each try, until it
     * succeeds, fails for good, or the policy gives up.
     *
     * @param path the znode the call concerns, for messages
     * @param handle supplies the handle for each try; it may throw (for instance {@link
     *     SessionLostException} when the session the call is pinned to has ended)
     * @param call the call to run
     * @param <T> what the call returns
     * @return what the call returned
     * @throws KeeperException any error that is not passing, as ZooKeeper reported it
     * @throws InterruptedException if interrupted while waiting for a reply or between tries
     * @throws SessionLostException if the session expired
     * @throws CoordinationException if the policy gave up
     */
    public <T> T run(String path, Supplier<ZooKeeper> handle, ZkCall<T> call)
            throws KeeperException, InterruptedException {
        return run(path, handle, call, false);
    }

    /**
     * As {@link #run}, for a call that does not depend on one session (reading shared data,
     * creating persistent nodes): {@code SESSIONEXPIRED} is retried like connection loss, with
     * {@code handle} supplying the newest session's handle at each try.
     *
     * @param path the znode the call concerns, for messages
     * @param handle supplies the current handle for each try
     * @param call the call to run
     * @param <T> what the call returns
     * @return what the call returned
     * @throws KeeperException any error that is not passing, as ZooKeeper reported it
     * @throws InterruptedException if interrupted while waiting for a reply or between tries
     * @throws CoordinationException if the policy gave up
     */
    public <T> T runOnAnySession(String path, Supplier<ZooKeeper> handle, ZkCall<T> call)
            throws KeeperException, InterruptedException {
        return run(path, handle, call, true);
    }

    private <T> T run(String path, Supplier<ZooKeeper> handle, ZkCall<T> call, boolean anySession)
            throws KeeperException, InterruptedException {
        long start = clock.nanoTime();
        for (int retries = 0; ; retries++) {
            KeeperException failure;
            try {
                return call.call(handle.get());
            } catch (KeeperException.SessionExpiredException e) {
                if (!anySession) {
                    throw new SessionLostException("session expired during a request on " + path, e);
                }
                failure = e;
            } catch (KeeperException.ConnectionLossException
                    | KeeperException.OperationTimeoutException
                    | KeeperException.SessionMovedException e) {
                failure = e;
            }
            Duration elapsed = Duration.ofNanos(clock.nanoTime() - start);
            Optional<Duration> delay = policy.retryDelay(retries, elapsed);
            if (delay.isEmpty()) {
                throw new CoordinationException("gave up on " + path + " after " + (retries + 1) + " tries in "
                        + elapsed.toMillis() + " ms under " + policy + ": " + failure.code(), failure);
            }
            log.debug("{} on {}; retry {} in {} ms", failure.code(), path, retries + 1, delay.get().toMillis());
            clock.sleep(delay.get().toNanos());
        }
    }
}
