package io.zkcoord.observe;

import java.util.List;

/**
 * What an acquisition or a hold is of: the recipe, its path(s), and what the hold belongs to.
 * The same value is passed to every call about one acquisition and the hold it leads to.
 *
 * <p>Immutable; safe to share between threads.
 *
 * @param recipe the recipe
 * @param paths the lock path of every queue the acquisition is in: one path for every recipe
 *     but {@link Recipe#MULTI}, which lists each of its paths, in the order the lock was made with
 * @param holder what the hold belongs to
 */
public record CoordinationEvent(Recipe recipe, List<String> paths, Holder holder) {

    /**
     * @param recipe the recipe that acquires or holds
     * @param paths the path(s) concerned, in the recipe's order; several for a multi-lock
     * @param holder what holds: a thread, a lease or a participant
     * @throws IllegalArgumentException if a component is null or {@code paths} is empty
     */
    public CoordinationEvent {
        if (recipe == null || paths == null || paths.isEmpty() || holder == null) {
            throw new IllegalArgumentException("recipe, holder and at least one path are required: " + recipe + ", "
                    + paths + ", " + holder);
        }
        paths = List.copyOf(paths);
    }

    /**
     * @param recipe the recipe that acquires or holds
     * @param path the one path concerned
     * @param holder what holds: a thread, a lease or a participant
     * @return an event of a recipe on one path
     */
    public static CoordinationEvent of(Recipe recipe, String path, Holder holder) {
        return new CoordinationEvent(recipe, List.of(path), holder);
    }

    /** @return the (first) path: the recipe's path, or the first path of a {@link Recipe#MULTI} lock */
    public String path() {
        return paths.get(0);
    }
}
