package io.zkcoord.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * JUnit 5: gives a test class or a test method a real ZooKeeper ensemble ({@link ZkTestEnsemble}). A
 * parameter of type {@link ZkTestEnsemble} is injected with it, and one of type {@link io.zkcoord.ZkClient}
 * with a new client of it ({@link ZkTestEnsemble#newClient()}).
 *
 * <ul>
 *   <li>On a class, one ensemble serves the whole class: it starts before the first test (and before
 *       {@code @BeforeAll} methods, which may take it as a parameter) and closes after the last.</li>
 *   <li>On a method, the method gets a fresh one, closed after it.</li>
 *   <li>Each test's clients (injected, or made by {@code newClient()} during the test or its
 *       {@code @BeforeEach}) are closed after it; its faults are healed and stopped servers restarted.</li>
 *   <li>A test fails if it leaves behind a watcher in one of the ensemble's clients, or a client it built
 *       itself from {@link ZkTestEnsemble#clientBuilder()} and did not close; the message names what was
 *       left. {@link SkipLeakCheck} turns this check off for one test.</li>
 * </ul>
 *
 * <pre>{@code
 * @ZkEnsemble(servers = 3)
 * class OrderServiceTest {
 *     @Test
 *     void stopsWhenItsLockIsLost(ZkTestEnsemble ensemble, ZkClient client) { ... }
 * }
 * }</pre>
 */
@Documented
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(ZkEnsembleExtension.class)
public @interface ZkEnsemble {

    /**
     * How many servers: 1 (a standalone server) or an odd number (a quorum).
     *
     * @return the number of servers, 1 by default
     */
    int servers() default 1;
}
