package io.zkcoord.security;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * What the client's TLS watch logged during each test: {@code io.zkcoord.session.TlsWatch} is set to DEBUG
 * for the test (so each probe's verdict is logged) and restored after it, and the lines are kept
 * for the test to assert on. Register it as an instance {@code @RegisterExtension} field. Its lists
 * may be read from any thread.
 */
final class TlsWatchLog implements BeforeEachCallback, AfterEachCallback {

    private static final String WATCH = "io.zkcoord.session.TlsWatch";

    private final List<String> verdicts = new CopyOnWriteArrayList<>();
    private final List<String> watchLines = new CopyOnWriteArrayList<>();
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private final AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            if (event.getLevel().isGreaterOrEqual(Level.ERROR) && event.getLoggerName().startsWith("io.zkcoord")) {
                errors.add(event.getFormattedMessage());
            }
            if (event.getLoggerName().equals(WATCH)) {
                watchLines.add(event.getFormattedMessage());
            }
            if (event.getFormattedMessage().contains("TLS probe verdict")) {
                verdicts.add(event.getFormattedMessage());
            }
        }
    };
    private Level watchLevel;

    @Override
    public void beforeEach(ExtensionContext context) {
        verdicts.clear();
        watchLines.clear();
        errors.clear();
        capture.start();
        root().addAppender(capture);
        Logger watch = watch();
        watchLevel = watch.getLevel();
        watch.setLevel(Level.DEBUG);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        root().detachAppender(capture);
        capture.stop();
        watch().setLevel(watchLevel);
    }

    /** Each TLS probe's verdict line, in order. */
    List<String> verdicts() {
        return verdicts;
    }

    /** Every line of {@code io.zkcoord.session.TlsWatch}, in order. */
    List<String> watchLines() {
        return watchLines;
    }

    /** The lines the library logged at ERROR or above. */
    List<String> errors() {
        return errors;
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }

    private static Logger watch() {
        return (Logger) LoggerFactory.getLogger(WATCH);
    }
}
