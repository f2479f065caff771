package eu.arrowhead.eventhandler.http;

import com.fasterxml.jackson.core.JacksonException;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers Jersey could not write because their clients had gone: a DEBUG line instead of a stack trace at ERROR.
 * Jersey logs every failure of a response's output once the response is committed, twice per answer (the write,
 * then the close), and a client that closes or resets its connection before its answer is written causes one: any
 * client could fill the log that way, 2 x 40 lines per request. Only failures of the connection are taken down: an
 * {@code IOException} of the plain class (Grizzly's "Connection is closed", the kernel's "Broken pipe" and
 * "Connection reset by peer"), a {@code SocketException}, {@code ClosedChannelException} or {@code EOFException},
 * with no Jackson exception in the chain. A serializer's failure (Jackson's exceptions are {@code IOException}s
 * too) and anything else Jersey logs is logged as Jersey logs it.
 */
public final class LeftClients {
    private static final Logger LOG = LoggerFactory.getLogger(LeftClients.class);
    /** Held here: java.util.logging keeps only weak references to its loggers, and the filter lives on ours. */
    private static final java.util.logging.Logger JERSEY_RESPONDER = java.util.logging.Logger.getLogger(
            "org.glassfish.jersey.server.ServerRuntime$Responder");
    /** Causes looked at, at most: a chain may loop back on itself. */
    private static final int MAX_CAUSES = 8;

    private LeftClients() {
    }

    /** Filters Jersey's log of responses it could not write. */
    public static synchronized void quietJerseysWriteFailures() {
        JERSEY_RESPONDER.setFilter(LeftClients::isLogged);
    }

    private static boolean isLogged(LogRecord record) {
        if (record.getLevel().intValue() < Level.WARNING.intValue() || !clientWentAway(record.getThrown())) {
            return true;
        }
        LOG.debug("an answer was not written, its client had gone: {}", record.getThrown().toString());
        return false;
    }

    private static boolean clientWentAway(Throwable thrown) {
        boolean connectionFailed = false;
        Throwable cause = thrown;
        for (int i = 0; i < MAX_CAUSES && cause != null; i++, cause = cause.getCause()) {
            if (cause instanceof JacksonException) {
                return false;
            }
            connectionFailed |= cause.getClass() == IOException.class || cause instanceof SocketException
                    || cause instanceof ClosedChannelException || cause instanceof EOFException;
        }
        return connectionFailed;
    }
}
