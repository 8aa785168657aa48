package io.zkcoord.observe;

import io.zkcoord.ConnectionState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Writes down every call as one line ({@code granted mutex /p THREAD token=5}); thread-safe. */
final class RecordingListener implements CoordinationListener {

    final List<String> lines = new CopyOnWriteArrayList<>();
    final List<Duration> durations = new CopyOnWriteArrayList<>();

    @Override
    public void acquisitionStarted(CoordinationEvent event) {
        lines.add("started " + describe(event));
    }

    @Override
    public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
        durations.add(waited);
        lines.add("granted " + describe(event) + " token=" + fencingToken);
    }

    @Override
    public void acquisitionEnded(CoordinationEvent event, Duration waited, WaitOutcome outcome) {
        durations.add(waited);
        lines.add("ended " + describe(event) + " " + outcome);
    }

    @Override
    public void released(CoordinationEvent event, Duration held, long fencingToken) {
        durations.add(held);
        lines.add("released " + describe(event) + " token=" + fencingToken);
    }

    @Override
    public void lost(CoordinationEvent event, Duration held, long fencingToken) {
        durations.add(held);
        lines.add("lost " + describe(event) + " token=" + fencingToken);
    }

    @Override
    public void sessionStateChanged(ConnectionState state) {
        lines.add("state " + state);
    }

    private static String describe(CoordinationEvent event) {
        return event.recipe().tag() + " " + event.path() + " " + event.holder();
    }

    /** @return the lines that start with {@code prefix} */
    List<String> starting(String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).toList();
    }
}
