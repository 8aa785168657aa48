package io.zkcoord.shard;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a shard path's coordinator last decided: the shard count and each shard's target owner.
 * Stored as the data of the path's {@code assignment} node, in a small text form that a person can
 * read with {@code zkCli.sh get}:
 * <pre>
 * zkcoord-shards 1
 * shards 12
 * owner worker-a 0-3,8
 * owner worker-b 4-7
 * </pre>
 * Member ids are URL-encoded (UTF-8), so any id fits on one line. 1,000 shards over 10 members take
 * well under 1 KiB.
 *
 * <p>Immutable and thread-safe.
 *
 * @param shards the number of shards of the path
 * @param owners shard to target owner id, sorted by shard (unmodifiable)
 */
public record ShardAssignment(int shards, Map<Integer, String> owners) {

    private static final String MAGIC = "zkcoord-shards 1";

    /**
     * @param shards the number of shards, at least 1
     * @param owners shard to target owner (copied)
     * @throws IllegalArgumentException if {@code shards < 1} or an owner's shard is out of range
     */
    public ShardAssignment {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, was " + shards);
        }
        TreeMap<Integer, String> copy = new TreeMap<>(owners);
        if (!copy.isEmpty() && (copy.firstKey() < 0 || copy.lastKey() >= shards)) {
            throw new IllegalArgumentException("shard out of range 0.." + (shards - 1) + ": " + copy.keySet());
        }
        owners = Collections.unmodifiableMap(copy);
    }

    /**
     * @param shards the number of shards, at least 1
     * @return an assignment of {@code shards} shards that gives none to anyone
     */
    public static ShardAssignment empty(int shards) {
        return new ShardAssignment(shards, Map.of());
    }

    /** @return this assignment as the bytes of the {@code assignment} node */
    public byte[] encode() {
        Map<String, List<Integer>> byOwner = new LinkedHashMap<>();
        owners.forEach((shard, owner) -> byOwner.computeIfAbsent(owner, o -> new ArrayList<>()).add(shard));
        StringBuilder text = new StringBuilder(MAGIC).append("\nshards ").append(shards).append('\n');
        byOwner.forEach((owner, list) -> text.append("owner ").append(URLEncoder.encode(owner, StandardCharsets.UTF_8))
                .append(' ').append(ranges(list)).append('\n'));
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param data the {@code assignment} node's data
     * @return the assignment it holds
     * @throws IllegalStateException if the data is not an assignment (the path is used by something else)
     */
    public static ShardAssignment decode(byte[] data) {
        String[] lines = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).split("\n");
        try {
            if (lines.length < 2 || !lines[0].equals(MAGIC) || !lines[1].startsWith("shards ")) {
                throw new IllegalArgumentException("no header");
            }
            int shards = Integer.parseInt(lines[1].substring("shards ".length()));
            Map<Integer, String> owners = new TreeMap<>();
            for (int i = 2; i < lines.length; i++) {
                String[] parts = lines[i].split(" ");
                if (parts.length != 3 || !parts[0].equals("owner")) {
                    throw new IllegalArgumentException("bad line " + lines[i]);
                }
                String owner = URLDecoder.decode(parts[1], StandardCharsets.UTF_8);
                for (String range : parts[2].split(",")) {
                    int dash = range.indexOf('-');
                    int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                    int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                    for (int s = from; s <= to; s++) {
                        owners.put(s, owner);
                    }
                }
            }
            return new ShardAssignment(shards, owners);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("not a shard assignment (" + e.getMessage() + "): "
                    + new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8), e);
        }
    }

    /**
     * @param member a member id
     * @return the shards assigned to {@code member}, ascending
     */
    public List<Integer> shardsOf(String member) {
        List<Integer> mine = new ArrayList<>();
        owners.forEach((shard, owner) -> {
            if (owner.equals(member)) {
                mine.add(shard);
            }
        });
        return mine;
    }

    private static String ranges(List<Integer> sorted) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < sorted.size()) {
            int from = sorted.get(i);
            int to = from;
            while (i + 1 < sorted.size() && sorted.get(i + 1) == to + 1) {
                to = sorted.get(++i);
            }
            if (out.length() > 0) {
                out.append(',');
            }
            out.append(from);
            if (to > from) {
                out.append('-').append(to);
            }
            i++;
        }
        return out.toString();
    }
}
