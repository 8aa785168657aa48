package io.zkcoord.security;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Captures everything logged while a security test class runs, with the library at DEBUG and
 * ZooKeeper and Netty at INFO (more than a production setting shows), and fails the class if any
 * line, argument or exception (message or cause) contains one of {@link Secrets#all()}. The
 * console shows what it showed before: the extra lines are captured, not printed.
 *
 * <p>Also {@link #assertClean(String, String)} for texts a test has in hand: messages, {@code
 * toString()}s, Inspector output.
 *
 * <p>One capture per test class; classes run one at a time (the default).
 */
final class SecretsInLogs implements BeforeAllCallback, AfterAllCallback {

    private static final Map<String, Level> RAISED = Map.of("io.zkcoord", Level.DEBUG, "org.apache.zookeeper",
            Level.INFO, "io.netty", Level.INFO);

    private final ConcurrentLinkedQueue<String> captured = new ConcurrentLinkedQueue<>();
    private final Map<String, Level> before = new HashMap<>();
    private Appender<ILoggingEvent> appender;
    private Filter<ILoggingEvent> quiet;
    private final List<Appender<ILoggingEvent>> consoles = new ArrayList<>();

    @Override
    public void beforeAll(ExtensionContext context) {
        LoggerContext logback = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        // The console keeps its old threshold per logger: what was raised here is captured only.
        Map<String, Level> old = new HashMap<>();
        RAISED.keySet().forEach(name -> old.put(name, logback.getLogger(name).getEffectiveLevel()));
        quiet = new Filter<>() {
            @Override
            public FilterReply decide(ILoggingEvent event) {
                for (Map.Entry<String, Level> e : old.entrySet()) {
                    if (event.getLoggerName().startsWith(e.getKey())) {
                        return event.getLevel().isGreaterOrEqual(e.getValue()) ? FilterReply.NEUTRAL : FilterReply.DENY;
                    }
                }
                return FilterReply.NEUTRAL;
            }
        };
        for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
            Appender<ILoggingEvent> a = it.next();
            a.addFilter(quiet);
            consoles.add(a);
        }
        appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                StringBuilder text = new StringBuilder(event.getLoggerName()).append(' ')
                        .append(event.getFormattedMessage());
                for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
                    text.append(" | ").append(t.getClassName()).append(": ").append(t.getMessage());
                    for (StackTraceElementProxy frame : t.getStackTraceElementProxyArray()) {
                        text.append(' ').append(frame.getSTEAsString());
                    }
                }
                captured.add(text.toString());
            }
        };
        appender.setContext(logback);
        appender.start();
        root.addAppender(appender);
        RAISED.forEach((name, level) -> {
            Logger logger = logback.getLogger(name);
            before.put(name, logger.getLevel());
            logger.setLevel(level);
        });
    }

    @Override
    public void afterAll(ExtensionContext context) {
        LoggerContext logback = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.detachAppender(appender);
        appender.stop();
        before.forEach((name, level) -> logback.getLogger(name).setLevel(level));
        consoles.forEach(Appender::clearAllFilters);
        assertTrue(captured.size() > 0, "something was logged and captured");
        for (String line : captured) {
            assertClean("a log line of " + context.getDisplayName(), line);
        }
        LoggerFactory.getLogger(SecretsInLogs.class).info("MEASURED {} log lines of {} searched for {} secrets: none"
                + " found", captured.size(), context.getDisplayName(), Secrets.all().size());
    }

    /** Fails if {@code text} contains any secret the tests use. */
    static void assertClean(String what, String text) {
        for (String secret : Secrets.all()) {
            if (text != null && text.contains(secret)) {
                fail(what + " contains a secret: " + text);
            }
        }
    }
}
