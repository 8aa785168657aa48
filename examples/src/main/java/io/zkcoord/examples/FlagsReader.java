package io.zkcoord.examples;

import io.zkcoord.ZkClient;
import io.zkcoord.cache.CacheListener;
import io.zkcoord.cache.CachedNode;
import io.zkcoord.cache.ZkCache;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One reader of {@link FlagsDemo}, in a JVM of its own: a {@link ZkCache} of {@code /config} that
 * prints each change of a feature flag as it sees it.
 *
 * <p>For the parent, after every change, one machine line with every flag it holds: {@code STATE
 * name=value;name=value} (sorted by name). Stopped with SIGTERM it closes its cache and client.
 */
public final class FlagsReader {

    private static final String USAGE = "usage: FlagsReader --connect host:port,... --name NAME --t0 MILLIS";
    static final String STATE = "STATE ";

    private FlagsReader() {
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args, Set.of("--connect", "--name", "--t0"), Set.of(), USAGE);
        String name = options.require("--name");
        Timeline timeline = new Timeline(Long.parseLong(options.require("--t0")));
        ZkClient client = DemoEnsemble.client(options.require("--connect"));
        ZkCache config = new ZkCache(client, FlagsDemo.CONFIG);
        config.addListener(new CacheListener() {
            @Override
            public void created(CachedNode node) {
                report("new flag", node);
            }

            @Override
            public void changed(CachedNode before, CachedNode after) {
                report("flag changed", after);
            }

            @Override
            public void deleted(CachedNode before) {
                report("flag removed", before);
            }

            private void report(String what, CachedNode node) {
                if (node.path().startsWith(FlagsDemo.FLAGS + "/")) {
                    timeline.say(name, "%s: %s = %s", what, node.path().substring(FlagsDemo.FLAGS.length() + 1), text(node));
                    timeline.line(STATE + state(config));
                }
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            config.close();
            client.close();
        }, "reader-shutdown"));
        config.start();
        config.awaitInitialized(java.time.Duration.ofSeconds(60));
        timeline.say(name, "watching %s: pid %d, %d flags", FlagsDemo.CONFIG, ProcessHandle.current().pid(),
                config.children(FlagsDemo.FLAGS).size());
        timeline.line(STATE + state(config));
        Thread.sleep(Long.MAX_VALUE);
    }

    /** @return every flag held, {@code name=value;...} sorted by name */
    static String state(ZkCache config) {
        return config.children(FlagsDemo.FLAGS).entrySet().stream()
                .map(e -> e.getKey() + "=" + text(e.getValue())).collect(Collectors.joining(";"));
    }

    private static String text(CachedNode node) {
        return new String(node.data(), StandardCharsets.UTF_8);
    }
}
