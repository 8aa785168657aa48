package io.zkcoord.test;

/**
 * A network fault between one client and its {@link ZkTestEnsemble}, in force from the moment the ensemble
 * returned it until {@link #heal()}. Use it in a try-with-resources block to heal on the way out:
 *
 * <pre>{@code
 * try (Fault partition = ensemble.partition(client)) {
 *     ... // the client hears nothing from the ensemble
 * }       // healed
 * }</pre>
 *
 * <p>Implementations are thread-safe, and {@link #heal()} is idempotent.
 */
public interface Fault extends AutoCloseable {

    /**
     * Ends the fault: the client's connections work again. A session that has not expired meanwhile
     * goes on; one that has, the client learns of on its next connection. Idempotent; never blocks for
     * long (it only reopens the proxy's connections).
     */
    void heal();

    /** Same as {@link #heal()}. */
    @Override
    default void close() {
        heal();
    }
}
