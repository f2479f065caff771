package eu.arrowhead.eventhandler.testing;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;

/** The lines a {@link ListAppender} has collected, safe to read while server threads may still log. */
public final class LoggedLines {
    private LoggedLines() {
    }

    /**
     * A copy of the lines. AppenderBase appends holding the appender's monitor, and a server thread may be inside
     * it even after the appender was detached (a line about a client that left): the copy is taken holding it too.
     */
    public static List<ILoggingEvent> of(ListAppender<ILoggingEvent> appender) {
        synchronized (appender) {
            return List.copyOf(appender.list);
        }
    }
}
