package io.zkcoord.group;

import java.util.Arrays;

/**
 * One live member of a {@link ZkGroup}, as read from the ensemble.
 *
 * <p>Immutable and thread-safe: the data is copied in and out.
 *
 * @param id the member's id, unique in its group
 * @param data what the member published when it joined (a copy)
 * @param sessionId the ZooKeeper session that holds the membership ({@code ephemeralOwner} of its node)
 */
public record Member(String id, byte[] data, long sessionId) {

    /**
     * @param id the member's id
     * @param data its data (copied; null means none)
     * @param sessionId its session
     * @throws IllegalArgumentException if {@code id} is null or empty
     */
    public Member {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("member id must not be null or empty");
        }
        data = data == null ? new byte[0] : data.clone();
    }

    /** @return a copy of the member's data */
    @Override
    public byte[] data() {
        return data.clone();
    }

    /** Members are equal when id, session and data bytes are. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Member m && m.id.equals(id) && m.sessionId == sessionId && Arrays.equals(m.data, data);
    }

    @Override
    public int hashCode() {
        return id.hashCode() * 31 + Long.hashCode(sessionId);
    }

    @Override
    public String toString() {
        return "Member[" + id + ", session 0x" + Long.toHexString(sessionId) + ", " + data.length + " bytes]";
    }
}
