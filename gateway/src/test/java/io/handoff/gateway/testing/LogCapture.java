package io.handoff.gateway.testing;

import org.jboss.logmanager.ExtLogRecord;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What one class logs while a test runs, as the operator reads it: a {@link Handler} on that class's logger (JBoss
 * LogManager's loggers are {@code java.util.logging} ones, so this sees what Quarkus writes), taken off by
 * {@link #close}. Messages are kept formatted, parameters filled in, since that is what the log says.
 */
public final class LogCapture implements AutoCloseable {

    /** A record as logged: its level and its formatted message. */
    public record Line(Level level, String message) {

        /** ERROR in JBoss Logging is SEVERE's value in {@code java.util.logging}. */
        public boolean isError() {
            return level.intValue() >= Level.SEVERE.intValue();
        }
    }

    private final Logger logger;
    private final List<Line> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            String message = record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
            lines.add(new Line(record.getLevel(), message));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    private LogCapture(Class<?> of) {
        this.logger = Logger.getLogger(of.getName());
        logger.addHandler(handler);
    }

    /** Starts keeping what {@code of} logs. */
    public static LogCapture of(Class<?> of) {
        return new LogCapture(of);
    }

    /** The ERROR lines logged since the capture started, oldest first. */
    public List<String> errors() {
        return lines.stream().filter(Line::isError).map(Line::message).toList();
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
