package io.zkcoord.examples.snippets;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import io.zkcoord.lock.ZkMutex;
import io.zkcoord.observe.CoordinationEvent;
import io.zkcoord.observe.CoordinationListener;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The examples of docs/losing-a-lock.md and docs/metrics.md: hearing of a suspended or lost session
 * and of a lost hold, and watching every acquisition. The documents show the marked regions
 * verbatim ({@link SnippetText}); {@link Snippets} runs them.
 */
final class Observing {

    private static final Logger log = LoggerFactory.getLogger(Observing.class);

    private Observing() {
    }

    // snippet:loss
    static ZkMutex watchForLoss(ZkClient client) {
        client.addConnectionListener(state -> {
            if (state == ConnectionState.SUSPENDED) {
                log.warn("session may be gone: stop writing to the guarded resource until RECONNECTED");
            }
        });
        ZkMutex mutex = new ZkMutex(client, "/locks/orders");
        mutex.addLossListener((lock, fencingToken) ->
                log.warn("lost {} (token {}) with the session: abandon the work done under it", lock, fencingToken));
        return mutex;
    }
    // end:loss

    // snippet:listener
    static void logSlowAcquisitions(ZkClient client) {
        client.addCoordinationListener(new CoordinationListener() {
            @Override
            public void acquisitionGranted(CoordinationEvent event, Duration waited, long fencingToken) {
                if (waited.toMillis() > 500) {
                    log.info("waited {} ms for {} {}", waited.toMillis(), event.recipe().tag(), event.path());
                }
            }
        });
    }
    // end:listener
}
