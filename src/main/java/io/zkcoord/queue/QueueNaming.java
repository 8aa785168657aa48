package io.zkcoord.queue;

import io.zkcoord.Protocol;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;

/**
 * How one recipe names the nodes it makes, what data they carry, and in what order it reads its
 * queue: the {@link Protocol} as the queue core sees it. Immutable.
 *
 * <ul>
 *   <li>{@link #ZKCOORD}: {@code <kind>-<attemptId>-<sequence>}, the owner's host, pid and thread as
 *       data, queue order by sequence ({@link QueueNode#QUEUE_ORDER}).
 *   <li>{@link #curator}: Curator's names ({@link CuratorNames#prefix}), Curator's default data (the
 *       local IP address, as text) unless the recipe gives its own (a participant id), and
 *       Curator's order: by {@link CuratorNames#sortKey} with the recipe's lock names, compared as
 *       text. A node in our own form (a zkcoord process not yet switched, or already switched back)
 *       keys by its ten-digit sequence, so that a fleet of zkcoord processes under both protocols
 *       agrees on one order. Nodes of another Curator lock name key by their whole name, after every
 *       sequence, as Curator puts them.
 * </ul>
 * Both read both forms (through {@link QueueNode#parse}); neither counts a child that is no queue
 * node at all (Curator would sort it by its name).
 */
public final class QueueNaming {

    /** zkcoord's own names, data and order. */
    public static final QueueNaming ZKCOORD = new QueueNaming(null);

    private static final byte[] LOCAL_ADDRESS = localAddress();

    /** Curator's lock names this recipe sorts by; null under ZKCOORD. */
    private final List<String> lockNames;
    private final Comparator<QueueNode> order;

    private QueueNaming(List<String> lockNames) {
        this.lockNames = lockNames == null ? null : List.copyOf(lockNames);
        this.order = lockNames == null ? QueueNode.QUEUE_ORDER : curatorOrder();
    }

    /**
     * @param lockNames the Curator lock names the recipe's Curator counterpart sorts by ({@code
     *     lock-} for a mutex; {@code __READ__} and {@code __WRIT__} for a read/write lock)
     * @return Curator's naming and order for such a recipe
     */
    public static QueueNaming curator(String... lockNames) {
        return new QueueNaming(List.of(lockNames));
    }

    /** @return the naming a recipe uses under {@code protocol}, with {@code lockNames} for Curator's */
    public static QueueNaming of(Protocol protocol, String... lockNames) {
        if (protocol == null) {
            throw new IllegalArgumentException("protocol must not be null");
        }
        return protocol == Protocol.ZKCOORD ? ZKCOORD : curator(lockNames);
    }

    /** @return true if this is Curator's naming */
    public boolean curator() {
        return lockNames != null;
    }

    /** @return the name prefix of a new attempt of {@code kind}, with a fresh random attempt id */
    public String newPrefix(String kind) {
        UUID id = UUID.randomUUID();
        return curator() ? CuratorNames.prefix(kind, id) : QueueNode.prefix(kind, id.toString().replace("-", ""));
    }

    /** @return the data of a node whose recipe gives none: the owner's, or Curator's default */
    public byte[] ownerData() {
        return curator() ? LOCAL_ADDRESS.clone() : OwnerInfo.ofCurrentThread();
    }

    /** @return the queue nodes among {@code children}, both forms, in this naming's order */
    public List<QueueNode> queue(List<String> children) {
        if (!curator()) {
            return QueueNode.queue(children);
        }
        // Each key made once, not at every comparison: this runs on ZooKeeper's event thread.
        List<Keyed> keyed = new ArrayList<>(children.size());
        for (String child : children) {
            QueueNode.parse(child).ifPresent(n -> keyed.add(new Keyed(n, sortKey(n))));
        }
        keyed.sort(KEYED_ORDER);
        List<QueueNode> nodes = new ArrayList<>(keyed.size());
        keyed.forEach(k -> nodes.add(k.node));
        return nodes;
    }

    /** @return the order {@link #queue} sorts by */
    public Comparator<QueueNode> order() {
        return order;
    }

    /** A node with its place: its key, then its name. */
    private record Keyed(QueueNode node, String key) {
    }

    private static final Comparator<Keyed> KEYED_ORDER = Comparator.comparing(Keyed::key)
            .thenComparing(k -> k.node.name());

    private Comparator<QueueNode> curatorOrder() {
        return Comparator.comparing(this::sortKey).thenComparing(QueueNode::name);
    }

    /** @return Curator's key for a Curator-form node; the ten-digit sequence for one of ours */
    private String sortKey(QueueNode node) {
        return node.curatorForm() ? CuratorNames.sortKey(node.name(), lockNames) : tenDigits(node.sequence());
    }

    private static String tenDigits(long sequence) {
        String digits = Long.toString(sequence);
        return digits.length() >= 10 ? digits : "0".repeat(10 - digits.length()) + digits;
    }

    private static byte[] localAddress() {
        try {
            return InetAddress.getLocalHost().getHostAddress().getBytes(StandardCharsets.UTF_8);
        } catch (UnknownHostException e) {
            return "127.0.0.1".getBytes(StandardCharsets.UTF_8);
        }
    }

    @Override
    public String toString() {
        return curator() ? "Curator naming " + lockNames : "zkcoord naming";
    }
}
