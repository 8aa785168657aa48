package io.zkcoord.examples;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The few command-line options of the demos: {@code --name value} and {@code --flag}. */
final class Options {

    private final Map<String, String> values = new HashMap<>();
    private final Set<String> flags = new HashSet<>();

    private Options() {
    }

    /**
     * Parses {@code args}; on an unknown or incomplete option prints {@code usage} and exits with
     * status 2.
     *
     * @param valued options that take a value, e.g. {@code --connect}
     * @param flagNames options that take none, e.g. {@code --no-lock}
     */
    static Options parse(String[] args, Set<String> valued, Set<String> flagNames, String usage) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println(usage);
                System.exit(0);
            } else if (valued.contains(a) && i + 1 < args.length) {
                o.values.put(a, args[++i]);
            } else if (flagNames.contains(a)) {
                o.flags.add(a);
            } else {
                System.err.println("unknown or incomplete option: " + a);
                System.err.println(usage);
                System.exit(2);
            }
        }
        return o;
    }

    Optional<String> value(String name) {
        return Optional.ofNullable(values.get(name));
    }

    String require(String name) {
        return value(name).orElseThrow(() -> new IllegalArgumentException(name + " is required"));
    }

    boolean flag(String name) {
        return flags.contains(name);
    }
}
