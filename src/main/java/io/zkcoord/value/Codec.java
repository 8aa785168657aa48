package io.zkcoord.value;

import io.zkcoord.CoordinationException;
import java.nio.ByteBuffer;

/**
 * How a value is kept in a node's data. Immutable.
 *
 * @param <T> the value's type
 */
interface Codec<T> {

    /** Curator's {@code DistributedAtomicLong}: 8 bytes, big-endian; no data reads 0. */
    Codec<Long> LONG = new Codec<>() {
        @Override
        public byte[] encode(Long value) {
            return ByteBuffer.allocate(Long.BYTES).putLong(value).array();
        }

        @Override
        public Long decode(String path, byte[] data) {
            if (data == null || data.length == 0) {
                return 0L;
            }
            if (data.length != Long.BYTES) {
                throw new CoordinationException(path + " holds " + data.length + " bytes, not the 8 of a long");
            }
            return ByteBuffer.wrap(data).getLong();
        }
    };

    /** Curator's {@code SharedCount}: 4 bytes, big-endian. */
    Codec<Integer> INT = new Codec<>() {
        @Override
        public byte[] encode(Integer value) {
            return ByteBuffer.allocate(Integer.BYTES).putInt(value).array();
        }

        @Override
        public Integer decode(String path, byte[] data) {
            if (data == null || data.length != Integer.BYTES) {
                throw new CoordinationException(path + " holds " + (data == null ? 0 : data.length)
                        + " bytes, not the 4 of an int");
            }
            return ByteBuffer.wrap(data).getInt();
        }
    };

    /** The bytes as they are (copied both ways). */
    Codec<byte[]> BYTES = new Codec<>() {
        @Override
        public byte[] encode(byte[] value) {
            return value.clone();
        }

        @Override
        public byte[] decode(String path, byte[] data) {
            return data == null ? new byte[0] : data.clone();
        }
    };

    /**
     * @param value a value, not null
     * @return its bytes
     */
    byte[] encode(T value);

    /**
     * @param path the node, for messages
     * @param data its data
     * @return the value
     * @throws CoordinationException if the data is not a value of this codec
     */
    T decode(String path, byte[] data);
}
