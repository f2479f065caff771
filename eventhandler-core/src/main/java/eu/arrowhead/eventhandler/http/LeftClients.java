package eu.arrowhead.eventhandler.http;

import java.io.IOException;
import java.util.logging.LogRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers Jersey could not write because their clients had gone: one DEBUG line each instead of Jersey's two stack
 * traces at ERROR. Jersey logs every {@code IOException} from a response's output once the response is committed,
 * and a client that closes (or resets) its connection before its answer is written causes one; any client could fill
 * the log that way, 2 x 40 lines per request. An exception that is not about the connection is still logged as Jersey
 * logs it.
 */
public final class LeftClients {
    private static final Logger LOG = LoggerFactory.getLogger(LeftClients.class);
    /** Held here: java.util.logging keeps only weak references to its loggers, and the filter lives on ours. */
    private static final java.util.logging.Logger JERSEY_RESPONDER = java.util.logging.Logger.getLogger(
            "org.glassfish.jersey.server.ServerRuntime$Responder");

    private LeftClients() {
    }

    /** Filters Jersey's log of responses it could not write. */
    public static synchronized void quietJerseysWriteFailures() {
        JERSEY_RESPONDER.setFilter(LeftClients::isLogged);
    }

    private static boolean isLogged(LogRecord record) {
        for (Throwable cause = record.getThrown(); cause != null; cause = cause.getCause()) {
            if (cause instanceof IOException) {
                LOG.debug("an answer was not written, its client had gone: {}", cause.toString());
                return false;
            }
        }
        return true;
    }
}
