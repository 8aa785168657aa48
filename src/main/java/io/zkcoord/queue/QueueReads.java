package io.zkcoord.queue;

import io.zkcoord.ZkSession;
import java.util.ArrayList;
import java.util.List;

/**
 * The reads of one {@link Acquisition}'s queues and what its rule decides on them (step 4 of its
 * protocol): the read of every queue, with a watch of the queue or none; whether the read being
 * decided on armed that watch; the rule's answer over every queue ({@link EveryQueue}); and what a
 * grant takes from the read it was decided on: the directories its release may remove ({@link
 * DirectoryRemoval}) and whether a node behind ours may be watching it.
 *
 * <p>Not thread-safe: one acquisition owns it and uses it under its own monitor only.
 */
final class QueueReads {

    private final QueueSet queues;
    private final QueueRule rule;

    /** True if the reply being decided on came from a read that armed a watch of the queue. */
    private boolean queueWatched;
    /** The children of the last read decided on; null before the first of an attempt. */
    private List<List<String>> lastRead;
    /** The directories a release may remove, by the read (or the watch) that granted. */
    private List<String> removableDirs = List.of();
    /**
     * True when the read that grants lists nodes behind ours: one of them may have seen ours
     * waiting and watch it, so a rule that {@link QueueRule#announcesPromotion() announces
     * promotions} must tell it. (A node created after that read reads a queue in which ours holds.)
     */
    private boolean successorMayWatch;

    QueueReads(QueueSet queues, QueueRule rule) {
        this.queues = queues;
        this.rule = rule;
    }

    /** A new attempt: no read of it yet. */
    void forget() {
        queueWatched = false;
        lastRead = null;
    }

    /**
     * Reads every queue ({@code getChildren}, or one {@code multi} of them), with the watcher of
     * {@code watch} if not null (its reply then reported to it); with the directory's stat when
     * the directory has a guard (its czxid tells whether it is the one validated).
     *
     * @throws RuntimeException if the client refused the request (nothing was sent)
     */
    void read(ZkSession in, SharedWatches.Subscription watch, QueueSet.ReadReply reply) {
        queues.read(in, watch == null ? null : watch.watcher(), queues.first().guard() != null,
                (code, children, dirCzxid) -> {
                    if (watch != null) {
                        watch.answered(code);
                    }
                    reply.read(code, children, dirCzxid);
                });
    }

    /** The current read armed a watch of the queue: it belongs to the decision on that read. */
    void armed() {
        queueWatched = true;
    }

    /** A read armed no watch of the queue that a decision may wait on (a new read, unwatched, replaces it). */
    void disarm() {
        queueWatched = false;
    }

    /** @return whether the read about to be decided on (or dropped) armed a watch of the queue; cleared */
    boolean takeArmed() {
        boolean armed = queueWatched;
        queueWatched = false;
        return armed;
    }

    /**
     * Asks the rule about every queue of {@code children}, as read; remembers the read. When the
     * answer is held, also what the grant takes from it: the directories its release may remove,
     * and whether a node behind ours may watch it.
     */
    EveryQueue.Answer decide(List<List<String>> children, OwnNodes own) {
        List<List<QueueNode>> queuesNow = new ArrayList<>(children.size());
        children.forEach(c -> queuesNow.add(queues.naming().queue(c)));
        EveryQueue.Answer answer = EveryQueue.decide(rule, queuesNow, own.nodes());
        lastRead = children;
        if (answer.turn() instanceof Turn.Held) {
            removableDirs = queues.removable(children, own.paths(), null);
            // A node behind ours may have read the queue while ours still waited, and watch it:
            // tell it (if the rule asks) unless ours is the last node of this very read.
            List<QueueNode> firstQueue = queuesNow.get(0);
            int position = QueueRule.positionOf(firstQueue, own.first());
            successorMayWatch = position >= 0 && position < firstQueue.size() - 1;
        }
        return answer;
    }

    /**
     * Held by a watch that saw {@code gonePath} go, without a read: the last read, less that node,
     * says which directories the release may remove; a node behind ours is assumed to watch it.
     */
    void heldWhenGone(String gonePath, OwnNodes own) {
        successorMayWatch = true; // not read: assume one (only rules that announce care)
        removableDirs = lastRead == null ? List.of() : queues.removable(lastRead, own.paths(), gonePath);
    }

    /** @return the children of the last read decided on, or null */
    List<List<String>> lastRead() {
        return lastRead;
    }

    /** @return the directories the grant's release may remove */
    List<String> removableDirs() {
        return removableDirs;
    }

    /** @return whether a node behind ours may watch it, at the grant */
    boolean successorMayWatch() {
        return successorMayWatch;
    }
}
