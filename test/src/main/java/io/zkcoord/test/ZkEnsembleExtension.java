package io.zkcoord.test;

import io.zkcoord.ZkClient;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link ZkEnsemble}; see there for what it does. Registered by the annotation:
 * there is no need to name it.
 *
 * <p>The leak check runs after each test, before its clients are closed: a client the ensemble made during
 * the test (injected, or by {@link ZkTestEnsemble#newClient()}) that is still open must hold no watcher
 * (ZooKeeper's client-side registrations: data, exist, child, persistent and persistent recursive), and a
 * client built from {@link ZkTestEnsemble#clientBuilder()} during the test must have been closed (it must
 * hold no connection through its proxies). Both are given 10 s to settle (a recipe the test ended may still
 * be removing its watch, or the event that ends it may be on its way). Either failure fails the test with a
 * message naming the client and, for watchers, their paths. {@link SkipLeakCheck} turns the check off.
 *
 * <p>Thread-safety: JUnit calls an extension from the thread that runs the test; state lives in JUnit's
 * per-test stores, so parallel test execution is safe.
 */
public final class ZkEnsembleExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(
            ZkEnsembleExtension.class);
    private static final String ENSEMBLE = "ensemble";
    private static final String MARK = "mark";

    /**
     * How long a closed client's connections may take to end at the proxy, or a client's watches to
     * go, before they count as left behind: 10 s. Not final only so that this module's own tests of a
     * leak that never goes (ExtensionTest) can see it reported without waiting the 10 s out; nothing
     * else changes it.
     */
    static volatile Duration closeSettle = Duration.ofSeconds(10);

    /** Made by JUnit. */
    public ZkEnsembleExtension() {
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        classAnnotation(context).ifPresent(a -> ensemble(context));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        // the class store closes its ensemble (a CloseableResource) when the class context ends
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        ZkTestEnsemble ensemble = ensemble(context);
        context.getStore(NAMESPACE).put(MARK, new Mark(ensemble, ensemble.mark()));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Mark mark = context.getStore(NAMESPACE).get(MARK, Mark.class);
        if (mark == null || mark.ensemble().isClosed()) {
            return;
        }
        ZkTestEnsemble ensemble = mark.ensemble();
        List<String> leftovers = skipLeakCheck(context) ? List.of() : leftovers(ensemble.linksAfter(mark.serial()));
        ensemble.closeLinksAfter(mark.serial());
        boolean methodScoped = context.getStore(NAMESPACE).get(ENSEMBLE, Holder.class) != null
                && AnnotationSupport.isAnnotated(context.getTestMethod(), ZkEnsemble.class);
        if (!methodScoped) {
            ensemble.restore(); // the class's next test starts with every server up and no fault
        }
        if (!leftovers.isEmpty() && context.getExecutionException().isEmpty()) {
            throw new AssertionError("the test left behind: " + String.join("; ", leftovers)
                    + " (close what you build, remove watches you set, or annotate the test with @SkipLeakCheck)");
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == ZkTestEnsemble.class || type == ZkClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ZkTestEnsemble ensemble = ensemble(context);
        if (parameter.getParameter().getType() == ZkTestEnsemble.class) {
            return ensemble;
        }
        try {
            return ensemble.newClient();
        } catch (RuntimeException e) {
            throw new ParameterResolutionException("cannot connect a client to " + ensemble, e);
        }
    }

    // ---- internals -----------------------------------------------------------------------------------------

    /** An ensemble in a store: closed when the store's context ends (after the method, or after the class). */
    private record Holder(ZkTestEnsemble ensemble) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            ensemble.close();
        }
    }

    /** The ensemble a test ran on and the serial of the last link made before it. */
    private record Mark(ZkTestEnsemble ensemble, long serial) {
    }

    /**
     * The ensemble for {@code context}: the method's own if the test method is annotated, else the class's
     * (started on first use either way).
     */
    private static ZkTestEnsemble ensemble(ExtensionContext context) {
        Optional<Method> method = context.getTestMethod();
        if (method.isPresent()) {
            Optional<ZkEnsemble> onMethod = AnnotationSupport.findAnnotation(method, ZkEnsemble.class);
            if (onMethod.isPresent()) {
                return context.getStore(NAMESPACE).getOrComputeIfAbsent(ENSEMBLE,
                        k -> new Holder(ZkTestEnsemble.start(onMethod.get().servers())), Holder.class).ensemble();
            }
        }
        ExtensionContext classContext = classContext(context);
        ZkEnsemble onClass = classAnnotation(classContext).orElseThrow(() -> new ParameterResolutionException(
                "no @ZkEnsemble on " + context.getDisplayName() + " or its class"));
        return classContext.getStore(NAMESPACE).getOrComputeIfAbsent(ENSEMBLE,
                k -> new Holder(ZkTestEnsemble.start(onClass.servers())), Holder.class).ensemble();
    }

    /** The context of the innermost test class, holding the class-wide ensemble. */
    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext c = context;
        while (c.getTestMethod().isPresent() && c.getParent().isPresent()) {
            c = c.getParent().get();
        }
        return c;
    }

    private static Optional<ZkEnsemble> classAnnotation(ExtensionContext context) {
        Optional<Class<?>> type = context.getTestClass();
        while (type.isPresent()) {
            Optional<ZkEnsemble> found = AnnotationSupport.findAnnotation(type.get(), ZkEnsemble.class);
            if (found.isPresent()) {
                return found;
            }
            type = Optional.ofNullable(type.get().getEnclosingClass()); // @Nested classes share the outer one's
        }
        return Optional.empty();
    }

    private static boolean skipLeakCheck(ExtensionContext context) {
        return context.getTestMethod().map(m -> isAnnotated(m, SkipLeakCheck.class)).orElse(false)
                || context.getTestClass().map(c -> isAnnotated(c, SkipLeakCheck.class)).orElse(false);
    }

    private static boolean isAnnotated(AnnotatedElement element, Class<SkipLeakCheck> type) {
        return AnnotationSupport.isAnnotated(element, type);
    }

    /** What the test's links left behind, one description each. */
    private static List<String> leftovers(List<ClientLink> links) {
        List<String> found = new ArrayList<>();
        for (ClientLink link : links) {
            if (link.madeByEnsemble()) {
                ZkClient client = link.client();
                if (client != null && !client.isClosed() && !watchesSettle(client)) {
                    ClientWatches.of(client).describe().ifPresent(w -> found.add(link.clientName() + " still has "
                            + w));
                }
            } else if (!settles(link)) {
                found.add("a client built from clientBuilder() (connect string " + link.connectString()
                        + ") was not closed: it still holds " + link.openConnections() + " connection(s)");
            }
        }
        return found;
    }

    /**
     * Whether the client's watches are all gone within {@link #closeSettle}. A recipe ended by the
     * test may still be removing its watch, or the event that ends it may still be on its way, when
     * the test method returns; a watch that stays that long is left behind.
     */
    private static boolean watchesSettle(ZkClient client) {
        long deadline = System.nanoTime() + closeSettle.toNanos();
        while (ClientWatches.of(client).count() > 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Whether the link's connections end (its client closed) within {@link #closeSettle}. */
    private static boolean settles(ClientLink link) {
        long deadline = System.nanoTime() + closeSettle.toNanos();
        while (link.openConnections() > 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
