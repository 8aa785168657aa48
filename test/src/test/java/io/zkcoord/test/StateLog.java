package io.zkcoord.test;

import io.zkcoord.ConnectionListener;
import io.zkcoord.ConnectionState;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records the connection states a client reports, in order. Thread-safe. */
final class StateLog implements ConnectionListener {

    private final List<ConnectionState> states = new CopyOnWriteArrayList<>();

    @Override
    public void stateChanged(ConnectionState state) {
        states.add(state);
    }

    List<ConnectionState> states() {
        return List.copyOf(states);
    }

    boolean saw(ConnectionState state) {
        return states.contains(state);
    }

    /** Index of the first {@code state} at or after {@code from}, or -1. */
    int indexOf(ConnectionState state, int from) {
        for (int i = from; i < states.size(); i++) {
            if (states.get(i) == state) {
                return i;
            }
        }
        return -1;
    }

    int size() {
        return states.size();
    }
}
