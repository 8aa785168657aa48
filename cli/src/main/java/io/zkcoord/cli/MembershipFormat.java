package io.zkcoord.cli;

import io.zkcoord.group.Member;
import io.zkcoord.shard.ShardSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A group's members, or a shard path's members and owners, as a table for people or JSON for programs. */
final class MembershipFormat {

    private MembershipFormat() {
    }

    /** One summary line, then one row per member in join order: id, session, data (UTF-8). */
    static String groupTable(String path, List<Member> members) {
        StringBuilder b = new StringBuilder(path).append(": group of ").append(members.size())
                .append(members.size() == 1 ? " member" : " members").append(", in join order\n");
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"MEMBER", "SESSION", "DATA"});
        for (Member m : members) {
            rows.add(new String[] {m.id(), "0x" + Long.toHexString(m.sessionId()), new String(m.data(), StandardCharsets.UTF_8)});
        }
        return b.append(Columns.render(rows)).toString();
    }

    /**
     * One summary line (shards, members, owned), then one row per member: the shards it owns now
     * (with their tokens, decimal) and the shards the coordinator gave it.
     */
    static String shardTable(ShardSnapshot s) {
        StringBuilder b = new StringBuilder(s.path()).append(": ").append(s.shards()).append(" shards over ")
                .append(s.members().size()).append(s.members().size() == 1 ? " member" : " members").append(", ")
                .append(s.owners().size()).append(" owned now\n");
        Map<String, List<String>> owned = new TreeMap<>();
        s.owners().forEach((shard, o) -> owned.computeIfAbsent(o.memberId(), k -> new ArrayList<>())
                .add(shard + " (token " + o.fencingToken() + ")"));
        Map<String, List<Integer>> target = new TreeMap<>();
        s.target().forEach((shard, id) -> target.computeIfAbsent(id, k -> new ArrayList<>()).add(shard));
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"MEMBER", "SESSION", "OWNS", "ASSIGNED"});
        for (Member m : s.members()) {
            rows.add(new String[] {m.id(), "0x" + Long.toHexString(m.sessionId()),
                String.join(", ", owned.getOrDefault(m.id(), List.of())),
                target.getOrDefault(m.id(), List.of()).toString()});
        }
        b.append(Columns.render(rows));
        List<Integer> unowned = new ArrayList<>();
        for (int k = 0; k < s.shards(); k++) {
            if (!s.owners().containsKey(k)) {
                unowned.add(k);
            }
        }
        if (!unowned.isEmpty()) {
            b.append("not owned now (being handed over, or no live member): ").append(unowned).append('\n');
        }
        return b.toString();
    }

    static String groupJson(String path, List<Member> members) {
        StringBuilder b = new StringBuilder("{\"path\":").append(SnapshotFormat.string(path)).append(",\"group\":[");
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            b.append(i > 0 ? "," : "").append("\n  {\"id\":").append(SnapshotFormat.string(m.id()))
                    .append(",\"sessionId\":").append(SnapshotFormat.string("0x" + Long.toHexString(m.sessionId())))
                    .append(",\"data\":").append(SnapshotFormat.string(new String(m.data(), StandardCharsets.UTF_8)))
                    .append('}');
        }
        return b.append("]}\n").toString();
    }

    static String shardJson(ShardSnapshot s) {
        StringBuilder b = new StringBuilder("{\"path\":").append(SnapshotFormat.string(s.path()))
                .append(",\"shards\":").append(s.shards()).append(",\"members\":[");
        for (int i = 0; i < s.members().size(); i++) {
            b.append(i > 0 ? "," : "").append(SnapshotFormat.string(s.members().get(i).id()));
        }
        b.append("],\"owners\":[");
        int i = 0;
        for (Map.Entry<Integer, ShardSnapshot.Owner> e : s.owners().entrySet()) {
            b.append(i++ > 0 ? "," : "").append("\n  {\"shard\":").append(e.getKey())
                    .append(",\"member\":").append(SnapshotFormat.string(e.getValue().memberId()))
                    .append(",\"fencingToken\":").append(e.getValue().fencingToken()).append('}');
        }
        b.append("],\"assigned\":{");
        i = 0;
        for (Map.Entry<Integer, String> e : s.target().entrySet()) {
            b.append(i++ > 0 ? "," : "").append('"').append(e.getKey()).append("\":").append(SnapshotFormat.string(e.getValue()));
        }
        return b.append("}}\n").toString();
    }
}
