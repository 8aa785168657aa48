package io.zkcoord.lock;

/**
 * How one acquisition treats interrupts. Interruptible acquisitions let {@link
 * InterruptedException} through. Uninterruptible ones ({@code lock()}) remember the interrupt,
 * clear the flag before each blocking step (ZooKeeper's synchronous calls would otherwise fail at
 * once), and set it again when the acquisition ends.
 *
 * <p>Confined to the acquiring thread.
 */
final class Interrupts {

    /** A blocking step that may be repeated after an interrupt. */
    @FunctionalInterface
    interface Step<T> {
        T run() throws InterruptedException;
    }

    private final boolean interruptible;
    private boolean pending;

    Interrupts(boolean interruptible) {
        this.interruptible = interruptible;
    }

    boolean interruptible() {
        return interruptible;
    }

    /**
     * Runs {@code step}; when uninterruptible, repeats it after an interrupt. Only for steps that
     * are safe to repeat.
     */
    <T> T run(Step<T> step) throws InterruptedException {
        for (;;) {
            clearIfUninterruptible();
            try {
                return step.run();
            } catch (InterruptedException e) {
                if (interruptible) {
                    throw e;
                }
                pending = true;
            }
        }
    }

    /** Remembers and clears the interrupt flag, when uninterruptible. */
    void clearIfUninterruptible() {
        if (!interruptible && Thread.interrupted()) {
            pending = true;
        }
    }

    /** Records an interrupt that an uninterruptible wait absorbed. */
    void absorbed() {
        pending = true;
    }

    /** Sets the flag again if an interrupt was absorbed. Call once, when the acquisition ends. */
    void restore() {
        if (pending) {
            Thread.currentThread().interrupt();
        }
    }
}
