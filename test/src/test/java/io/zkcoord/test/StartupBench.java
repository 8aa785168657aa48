package io.zkcoord.test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * How long {@link ZkTestEnsemble#start} takes, for 1 and 3 servers: from the call until it returns (servers
 * serving; for 3, a leader elected and followed). The first start of the JVM is reported apart (class
 * loading); then {@value #RUNS} starts each. A benchmark, not a test: run it with
 * {@code mvn -B -q -f test/pom.xml -Pbench test-compile exec:java}.
 */
public final class StartupBench {

    private static final int RUNS = 5;

    private StartupBench() {
    }

    /**
     * Runs the benchmark and prints one line per ensemble size.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        System.out.printf(Locale.ROOT, "cores: %d, java %s%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        System.out.printf(Locale.ROOT, "first start in this JVM (1 server): %.0f ms%n", startMillis(1));
        for (int servers : new int[] {1, 3}) {
            List<Double> times = new ArrayList<>();
            for (int i = 0; i < RUNS; i++) {
                times.add(startMillis(servers));
            }
            Collections.sort(times);
            System.out.printf(Locale.ROOT, "%d server(s), %d starts: min %.0f ms, median %.0f ms, max %.0f ms%n",
                    servers, RUNS, times.get(0), times.get(RUNS / 2), times.get(RUNS - 1));
        }
    }

    private static double startMillis(int servers) {
        long start = System.nanoTime();
        ZkTestEnsemble ensemble = ZkTestEnsemble.start(servers);
        double millis = (System.nanoTime() - start) / 1e6;
        ensemble.close();
        return millis;
    }
}
