package eu.arrowhead.eventhandler.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.ExceptionType;
import java.io.IOException;
import java.util.UUID;
import org.glassfish.grizzly.http.server.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every error the server sends is an Arrowhead {@link ErrorMessage}, built here: in a JAX-RS response, in a
 * plain Grizzly handler's response ({@link #write}), in Grizzly's own answers and in a stream's refusal. Bad
 * input is a 4xx that says what is wrong; a fault of ours is a 500 with an incident id to find it in the log
 * ({@link #fault}), and never a stack trace in the response.
 */
public final class ErrorBodies {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorBodies.class);

    private ErrorBodies() {
    }

    /**
     * The error as a JAX-RS response's entity.
     *
     * @param origin the path the request was for, or {@code null}
     */
    public static ErrorMessage message(int status, ExceptionType exceptionType, String message, String origin) {
        return new ErrorMessage(message, status, exceptionType, origin);
    }

    /** The error's JSON, as a response's body. */
    public static byte[] json(int status, ExceptionType exceptionType, String message, String origin) {
        try {
            return JsonMapper.get().writeValueAsBytes(message(status, exceptionType, message, origin));
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** The error's JSON as text, for a body or a frame that is assembled as text. */
    public static String jsonText(int status, ExceptionType exceptionType, String message, String origin) {
        try {
            return JsonMapper.get().writeValueAsString(message(status, exceptionType, message, origin));
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** The type of an error that only its status describes (Grizzly's own answers): ours from 500 on. */
    public static ExceptionType typeOf(int status) {
        return status >= 500 ? ExceptionType.GENERIC : ExceptionType.INVALID_PARAMETER;
    }

    /** Writes an error to a raw Grizzly response that has not been committed. */
    public static void write(Response response, int status, ExceptionType exceptionType, String message, String origin,
                             Integer retryAfterSeconds) throws IOException {
        byte[] body = json(status, exceptionType, message, origin);
        response.setStatus(status);
        if (retryAfterSeconds != null) {
            response.setHeader("Retry-After", retryAfterSeconds.toString());
        }
        response.setContentType("application/json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /**
     * Writes a fault of ours to a raw Grizzly response: a 500 with an incident id, and the stack trace in the
     * log only.
     */
    public static void writeFault(Response response, String origin, Throwable e) throws IOException {
        write(response, 500, ExceptionType.GENERIC, fault(origin, e), origin, null);
    }

    /** Logs a fault of ours with its stack trace under a new incident id; returns the message that names it. */
    public static String fault(String origin, Throwable e) {
        String incident = UUID.randomUUID().toString();
        LOG.error("incident {}: unexpected failure serving {}", incident, origin, e);
        return "internal error; the server log has incident " + incident;
    }
}
