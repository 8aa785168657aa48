package io.zkcoord.once;

import io.zkcoord.CommitOutcomeUnknownException;
import io.zkcoord.CoordinationException;
import io.zkcoord.ZkSession;
import io.zkcoord.internal.ClientServices;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One operation of a {@link OnceWriter}, as a state machine driven by ZooKeeper's replies:
 * <pre>
 *   start -> (marker unknown: READ BOTH | no state: READ VALUE | PLAN)
 *   PLAN: Done on a state read now -> complete; Done on a remembered one -> READ VALUE;
 *         Write -> SEND attempt n
 *   SEND: applied -> complete | lost -> (policy delay) READ BOTH | marker moved -> READ BOTH
 *         | value moved -> (a random pause of up to 32 round trips) READ VALUE (READ BOTH after a loss)
 *         | parent missing -> make parents, PLAN
 *         | session ended -> (an attempt unanswered: unknown) else PLAN in the next session
 *   READ BOTH: the value, then the marker (same round trip, in this order): the marker names an
 *         attempt of this operation -> complete with that attempt's result; else PLAN
 * </pre>
 * The value is read before the marker: an attempt that lands between the two reads shows in the
 * marker, so an answer without a write ({@link Plan.Done}) is never taken on a value that a lost
 * attempt of ours had already changed. An attempt that lands after both reads is refused by the
 * marker's guard on the next attempt. See {@link OnceRule}.
 *
 * <p>Not thread-safe by itself: its steps run one after another (each sends one request or reads
 * two in one round trip, and the next step runs from the reply).
 */
final class OnceOperation<R> {

    private static final Logger log = LoggerFactory.getLogger(OnceOperation.class);
    /** A pause shorter than this is not worth a trip through the scheduler. */
    private static final long MIN_PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private final OnceWriter writer;
    private final ClientServices services;
    private final String path;
    private final long number;
    private final Change<R> change;
    private final CompletableFuture<Outcome<R>> result;
    /** The result of each attempt sent, should it turn out to have landed. */
    private final Map<Integer, R> sent = new HashMap<>();

    private ZkSession session;
    /** Whether some attempt was sent and its reply lost, and no later answer settled it. */
    private boolean unanswered;
    /** Whether the writer's remembered state was read during this operation. */
    private boolean fresh;
    private int attempts;
    /** Refusals by another writer's write in a row (at most 6), for the pause after the next. */
    private int refused;
    /** When the last attempt was sent. */
    private long sentNanos;
    private int retries;
    private long startNanos;

    OnceOperation(OnceWriter writer, long number, Change<R> change, CompletableFuture<Outcome<R>> result) {
        this.writer = writer;
        this.services = writer.services();
        this.path = writer.path();
        this.number = number;
        this.change = change;
        this.result = result;
    }

    void start() {
        startNanos = System.nanoTime();
        withSession(s -> proceed());
    }

    /** Runs {@code then} in the live session (waiting for one); a new session while an attempt is unanswered ends the operation. */
    private void withSession(Consumer<ZkSession> then) {
        CompletableFuture<ZkSession> next;
        try {
            next = services.session();
        } catch (RuntimeException e) {
            fail(unanswered ? unknown(e) : e); // a closed client: an attempt sent may still have landed
            return;
        }
        if (unanswered && session != null && !session.isAlive()) {
            fail(unknown(null)); // its session ended with an attempt unanswered: nobody can tell now
            return;
        }
        if (!next.isDone()) {
            // No session now (cut off past the session timeout, or not yet connected): a try that
            // failed, so that the retry policy bounds the wait.
            retryLater(() -> withSession(then), Code.CONNECTIONLOSS);
            return;
        }
        next.whenComplete((s, failure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                fail(unanswered ? unknown(cause) : cause);
                return;
            }
            if (session != null && s != session && unanswered) {
                fail(unknown(null));
                return;
            }
            if (!s.isAlive()) {
                retryLater(() -> withSession(then), null); // the client has not yet built the next session
                return;
            }
            session = s;
            try {
                then.accept(s);
            } catch (RuntimeException e) {
                // a request that could not even be sent (a closed handle): never leave the caller waiting
                fail(unanswered ? unknown(e) : new CoordinationException("cannot continue on " + path + ": " + e, e));
            }
        });
    }

    private void proceed() {
        if (writer.marker(session) == null) {
            readBoth();
        } else if (writer.cached() == null) {
            readValue();
        } else {
            plan();
        }
    }

    private void plan() {
        NodeState seen = writer.cached();
        Plan<R> plan;
        try {
            plan = change.plan(seen);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        if (plan instanceof Plan.Done<R> done) {
            if (fresh) {
                complete(done.result(), seen);
            } else {
                readValue();
            }
            return;
        }
        send((Plan.Write<R>) plan, seen);
    }

    private void send(Plan.Write<R> write, NodeState seen) {
        int n = ++attempts;
        OnceRule.Attempt attempt;
        try {
            attempt = OnceRule.attempt(path, seen, write, OnceRule.markerPath(path, session.id()), writer.marker(session),
                    new OnceRule.Token(writer.id(), number, n), services.aclFor(path),
                    services.aclFor(OnceRule.markerPath(path, session.id())));
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        sent.put(n, write.result());
        sentNanos = System.nanoTime();
        try {
            session.zooKeeper().multi(attempt.ops(), (rc, p, ctx, results) -> answered(attempt, write, Code.get(rc), results),
                    null);
        } catch (RuntimeException e) {
            fail(new CoordinationException("cannot send a write of " + path + ": " + e.getMessage(), e));
        }
    }

    private void answered(OnceRule.Attempt attempt, Plan.Write<R> write, Code code, List<OpResult> results) {
        switch (OnceRule.verdict(code, results, attempt)) {
            case APPLIED -> {
                writer.marker(session, new OnceRule.Marker(true, OnceRule.markerVersionAfter(results, attempt)));
                NodeState after = OnceRule.valueAfter(results, attempt, write.data());
                writer.cached(after);
                complete(write.result(), after);
            }
            case LOST -> {
                unanswered = true;
                retryLater(this::readBoth, code);
            }
            case SESSION_ENDED -> sessionEnded(code);
            case MARKER_MOVED -> readBoth();
            case VALUE_MOVED -> {
                if (unanswered) {
                    readBoth();
                } else {
                    afterContention();
                }
            }
            case EXTRA_REFUSED -> {
                if (unanswered) {
                    readBoth();
                } else {
                    readValue();
                }
            }
            case PARENT_MISSING -> Parents.ensure(session.zooKeeper(), path, services::aclFor, made -> {
                if (made == Code.OK) {
                    plan();
                } else {
                    handleReadError(made, this::plan);
                }
            });
            case FAILED -> fail(new CoordinationException("the ensemble refused a write of " + path + " (" + code + ")",
                    KeeperException.create(code, path)));
        }
    }

    /**
     * Another writer's write landed first: reads the value again and re-plans, after a random
     * pause of up to a few round trips that doubles with each refusal in a row (to at most 32 round trips), so
     * that writers refused together do not all write again together, one winning and the rest
     * refused again. The pause is measured in this attempt's round trip, not in fixed time.
     */
    private void afterContention() {
        refused = Math.min(refused + 1, 6);
        long roundTrip = System.nanoTime() - sentNanos;
        long pause = (long) (ThreadLocalRandom.current().nextDouble() * roundTrip * (1L << (refused - 1)));
        if (pause < MIN_PAUSE_NANOS) {
            readValue();
            return;
        }
        try {
            services.scheduler().schedule(() -> withSession(s -> readValue()), pause, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            fail(new IllegalStateException("the client is closed; nothing written to " + path));
        }
    }

    private void readValue() {
        session.zooKeeper().getData(path, false, (rc, p, ctx, data, stat) -> {
            Code code = Code.get(rc);
            if (code == Code.OK || code == Code.NONODE) {
                writer.cached(code == Code.OK ? NodeState.of(data, stat) : NodeState.MISSING);
                fresh = true;
                plan();
            } else {
                handleReadError(code, this::readValue);
            }
        }, null);
    }

    /** Reads the value, then the marker, in one round trip: see the class comment for why in this order. */
    private void readBoth() {
        String marker = OnceRule.markerPath(path, session.id());
        final NodeState[] value = new NodeState[1];
        final Code[] valueCode = new Code[1];
        session.zooKeeper().getData(path, false, (rc, p, ctx, data, stat) -> {
            valueCode[0] = Code.get(rc);
            if (valueCode[0] == Code.OK) {
                value[0] = NodeState.of(data, stat);
            }
        }, null);
        session.zooKeeper().getData(marker, false, (rc, p, ctx, data, stat) -> {
            // Replies come in order on the event thread: the value's has been handled.
            Code vc = valueCode[0];
            Code mc = Code.get(rc);
            if (vc != Code.OK && vc != Code.NONODE) {
                handleReadError(vc, this::readBoth);
                return;
            }
            if (mc != Code.OK && mc != Code.NONODE) {
                handleReadError(mc, this::readBoth);
                return;
            }
            resolved(vc == Code.OK ? value[0] : NodeState.MISSING, mc == Code.OK ? data : null, stat);
        }, null);
    }

    private void resolved(NodeState value, byte[] markerData, Stat markerStat) {
        writer.cached(value);
        fresh = true;
        if (markerData == null) {
            writer.marker(session, OnceRule.Marker.ABSENT);
        } else {
            writer.marker(session, new OnceRule.Marker(true, markerStat.getVersion()));
            Optional<OnceRule.Token> token = OnceRule.Token.parse(markerData);
            if (token.isPresent() && token.get().writer() == writer.id() && token.get().operation() == number) {
                R landed = sent.get(token.get().attempt());
                unanswered = false;
                log.debug("{}: attempt {} of a write whose reply was lost had landed", path, token.get().attempt());
                complete(landed, value);
                return;
            }
        }
        plan();
    }

    private void handleReadError(Code code, Runnable again) {
        switch (code) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED -> retryLater(again, code);
            case SESSIONEXPIRED -> sessionEnded(code);
            default -> fail(new CoordinationException("cannot read " + path + " (" + code + ")",
                    KeeperException.create(code, path)));
        }
    }

    private void sessionEnded(Code code) {
        if (unanswered) {
            fail(unknown(KeeperException.create(code, path)));
            return;
        }
        retryLater(this::proceed, code);
    }

    /** Runs {@code step} in the live session after the retry policy's delay, or ends the operation if the policy gives up. */
    private void retryLater(Runnable step, Code why) {
        Duration elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
        Optional<Duration> delay = services.retryPolicy().retryDelay(retries++, elapsed);
        if (delay.isEmpty() || services.isClosed()) {
            if (services.isClosed()) {
                fail(unanswered ? unknown(null) : new IllegalStateException("the client is closed; nothing written to " + path));
            } else if (unanswered) {
                fail(unknown(why == null ? null : KeeperException.create(why, path)));
            } else {
                fail(new CoordinationException("gave up on " + path + " after " + retries + " tries in " + elapsed.toMillis()
                        + " ms under " + services.retryPolicy() + (why == null ? "" : ": " + why) + "; nothing written",
                        why == null ? null : KeeperException.create(why, path)));
            }
            return;
        }
        try {
            services.scheduler().schedule(() -> withSession(s -> step.run()), delay.get().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            fail(unanswered ? unknown(null) : new IllegalStateException("the client is closed; nothing written to " + path));
        }
    }

    private CommitOutcomeUnknownException unknown(Throwable cause) {
        return new CommitOutcomeUnknownException("a write of " + path + " was sent and its reply lost, and "
                + (session != null && session.isAlive() ? "the retry policy gave up before it could be read back"
                        : "its session ended, taking the marker that would tell")
                + ": it may or may not have been applied (once at most)", cause);
    }

    private void complete(R value, NodeState after) {
        result.complete(new Outcome<>(value, after));
        writer.finished();
    }

    private void fail(Throwable failure) {
        result.completeExceptionally(failure);
        writer.finished();
    }
}
