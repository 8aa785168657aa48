package io.zkcoord.nemesis;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The history of a run: one line per event, written by every client process and by the nemesis, merged and sorted
 * by time afterwards. Times are {@link System#nanoTime()}: on Linux HotSpot reads {@code
 * clock_gettime(CLOCK_MONOTONIC)}, one clock for every process of the machine, so times taken in different JVMs
 * compare (the run checks it: a child's first event comes after the nemesis launched it).
 *
 * <p>A line is tab-separated: {@code time process workload type f path token session value}, {@code -} for an
 * empty text field.
 * <ul>
 *   <li>{@code process}: a client process incarnation ({@code c2.1}: client slot 2, second start) or {@code
 *       nemesis};</li>
 *   <li>{@code type}: {@code invoke}, {@code ok}, {@code fail}, {@code info} (outcome unknown) for operations;
 *       {@code event} for what a client is told ({@code f}: {@code conn}, {@code lost}, {@code elected}, {@code
 *       revoked}); {@code start}/{@code end} for the nemesis's faults ({@code f}: the fault kind, {@code path}: the
 *       target), {@code final} for what the nemesis read at the end;</li>
 *   <li>{@code f}: {@code acquire}, {@code release}, {@code write}, ...; {@code token}: the fencing token or epoch;
 *       {@code value}: the rest ({@code write ok}: {@code count=N prev=T}).</li>
 * </ul>
 */
final class History {

    private History() {
    }

    /** One event. */
    record Event(long time, String process, String workload, String type, String f, String path, long token,
            long session, String value) {

        String line() {
            return time + "\t" + text(process) + "\t" + text(workload) + "\t" + text(type) + "\t" + text(f) + "\t"
                    + text(path) + "\t" + token + "\t" + Long.toHexString(session) + "\t" + text(value);
        }

        static Event parse(String line) {
            String[] p = line.split("\t", -1);
            if (p.length != 9) {
                throw new IllegalArgumentException("not a history line: " + line);
            }
            return new Event(Long.parseLong(p[0]), untext(p[1]), untext(p[2]), untext(p[3]), untext(p[4]),
                    untext(p[5]), Long.parseLong(p[6]), Long.parseUnsignedLong(p[7], 16), untext(p[8]));
        }

        boolean is(String type, String f) {
            return this.type.equals(type) && this.f.equals(f);
        }

        /** {@code key=value} out of {@link #value}, or null. */
        String attr(String key) {
            for (String word : value.split(" ")) {
                if (word.startsWith(key + "=")) {
                    return word.substring(key.length() + 1);
                }
            }
            return null;
        }

        private static String text(String s) {
            return s == null || s.isEmpty() ? "-" : s.replace('\t', ' ').replace('\n', ' ');
        }

        private static String untext(String s) {
            return s.equals("-") ? "" : s;
        }
    }

    /** Appends events to a file, one flushed line each, so a SIGKILL loses nothing already recorded. Thread-safe. */
    static final class Writer implements AutoCloseable {
        private final String process;
        private final BufferedWriter out;

        Writer(Path file, String process) {
            this.process = process;
            try {
                this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Records an event stamped now. */
        Event record(String workload, String type, String f, String path, long token, long session, String value) {
            Event e;
            synchronized (this) {
                e = new Event(System.nanoTime(), process, workload, type, f, path, token, session, value);
                try {
                    out.write(e.line());
                    out.newLine();
                    out.flush();
                } catch (IOException ex) {
                    throw new UncheckedIOException(ex);
                }
            }
            return e;
        }

        @Override
        public synchronized void close() {
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Reads every event of {@code files} (an unfinished last line, cut by a SIGKILL, is skipped), sorted by time. */
    static List<Event> read(List<Path> files) throws IOException {
        List<Event> events = new ArrayList<>();
        for (Path file : files) {
            if (!Files.exists(file)) {
                continue; // a process killed before it wrote anything
            }
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (line.isBlank()) {
                    continue;
                }
                try {
                    events.add(Event.parse(line));
                } catch (IllegalArgumentException e) {
                    // a line half-written when its process was killed
                }
            }
        }
        events.sort(Comparator.comparingLong(Event::time));
        return events;
    }

    /** Writes {@code events} to one file, the run's history. */
    static void write(List<Event> events, Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        for (Event e : events) {
            lines.add(e.line());
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }
}
