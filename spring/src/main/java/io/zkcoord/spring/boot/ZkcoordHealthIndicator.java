package io.zkcoord.spring.boot;

import io.zkcoord.ConnectionState;
import io.zkcoord.ZkClient;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Spring Boot's health of a {@link ZkClient} (the contributor {@code zkcoord}): {@code UP} while
 * the session is {@code CONNECTED} or {@code RECONNECTED}, {@code OUT_OF_SERVICE} while {@code
 * SUSPENDED} (the session may be alive; nothing can be confirmed), {@code DOWN} before the first
 * session ({@code CONNECTING}) and when {@code LOST} or {@code CLOSED}. Its details are the state,
 * the session id (hex; 0 before the first session) and the connect string.
 *
 * <p>The state is the one the client's {@link io.zkcoord.ConnectionListener}s were last told, so a
 * listener added after this indicator sees the indicator agree with the state it is being told.
 * Makes no ZooKeeper call. Thread-safe.
 */
public final class ZkcoordHealthIndicator implements HealthIndicator {

    private final ZkClient client;
    private volatile ConnectionState told;

    /** @throws IllegalArgumentException if {@code client} is null */
    public ZkcoordHealthIndicator(ZkClient client) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        this.client = client;
        if (!client.isClosed()) {
            client.addConnectionListener(state -> told = state);
        }
    }

    /** @return the health for the client's state as its listeners were last told; never blocks */
    @Override
    public Health health() {
        ConnectionState state = told != null ? told : client.state();
        if (client.isClosed()) {
            state = ConnectionState.CLOSED;
        }
        return Health.status(status(state))
                .withDetail("state", state.name())
                .withDetail("sessionId", "0x" + Long.toHexString(client.isClosed() ? 0 : client.sessionId()))
                .withDetail("connectString", client.connectString())
                .build();
    }

    static Status status(ConnectionState state) {
        return switch (state) {
            case CONNECTED, RECONNECTED -> Status.UP;
            case SUSPENDED -> Status.OUT_OF_SERVICE;
            default -> Status.DOWN;
        };
    }
}
