package eu.arrowhead.eventhandler.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.topic.HubUnavailableException;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.UriInfo;
import jakarta.ws.rs.ext.ExceptionMapper;
import java.io.CharConversionException;
import java.io.IOException;
import java.util.List;
import java.util.UUID;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every error the server sends is an Arrowhead {@link ErrorMessage}, whether it comes from a JAX-RS
 * resource (through the mappers here) or from a plain Grizzly handler ({@link #write}). Bad input is a 4xx
 * that says what is wrong; a fault of ours is a 500 with an incident id to find it in the log, and never a
 * stack trace in the response.
 */
public final class ErrorResponses {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorResponses.class);

    private ErrorResponses() {
    }

    /** The JAX-RS exception mappers. */
    public static List<Object> mappers() {
        return List.of(new RequestExceptionMapper(), new JsonExceptionMapper(), new NotUtf8Mapper(), new UnavailableMapper(),
                new WebApplicationExceptionMapper(), new FaultMapper());
    }

    /** Writes an error to a raw Grizzly response that has not been committed. */
    public static void write(Response response, int status, ExceptionType exceptionType, String message, String origin,
                             Integer retryAfterSeconds) throws IOException {
        byte[] body = JsonMapper.get().writeValueAsBytes(new ErrorMessage(message, status, exceptionType, origin));
        response.setStatus(status);
        if (retryAfterSeconds != null) {
            response.setHeader("Retry-After", retryAfterSeconds.toString());
        }
        response.setContentType(MediaType.APPLICATION_JSON);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /**
     * Writes an error for a request refused before its body was read, and closes the connection once the
     * answer is sent: the unread rest of the body must never be taken for the next request, and a client that
     * sent a body too large or too slowly gets no more of the server's time.
     */
    public static void writeAndClose(Request request, Response response, RequestException e,
                                     Integer retryAfterSeconds) throws IOException {
        // Grizzly would otherwise read and skip the rest of the body to keep the connection.
        request.getRequest().setContentBroken(true);
        response.setHeader("Connection", "close");
        write(response, e.status(), e.exceptionType(), e.getMessage(), request.getRequestURI(), retryAfterSeconds);
    }

    /**
     * Writes a fault of ours to a raw Grizzly response: a 500 with an incident id, and the stack trace in the
     * log only.
     */
    public static void writeFault(Response response, String origin, Throwable e) throws IOException {
        write(response, 500, ExceptionType.GENERIC, faultMessage(origin, e), origin, null);
    }

    private static String faultMessage(String origin, Throwable e) {
        String incident = UUID.randomUUID().toString();
        LOG.error("incident {}: unexpected failure serving {}", incident, origin, e);
        return "internal error; the server log has incident " + incident;
    }

    static jakarta.ws.rs.core.Response build(int status, ExceptionType exceptionType, String message, UriInfo uri) {
        String origin = uri == null ? null : "/" + uri.getPath();
        return jakarta.ws.rs.core.Response.status(status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(new ErrorMessage(message, status, exceptionType, origin))
                .build();
    }

    private abstract static class Mapper<E extends Throwable> implements ExceptionMapper<E> {
        @Context
        UriInfo uri;
    }

    private static final class RequestExceptionMapper extends Mapper<RequestException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(RequestException e) {
            return build(e.status(), e.exceptionType(), e.getMessage(), uri);
        }
    }

    private static final class JsonExceptionMapper extends Mapper<JsonProcessingException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(JsonProcessingException e) {
            return build(400, ExceptionType.BAD_PAYLOAD, JsonMapper.describe(e), uri);
        }
    }

    private static final class NotUtf8Mapper extends Mapper<CharConversionException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(CharConversionException e) {
            return build(400, ExceptionType.BAD_PAYLOAD, JsonMapper.describe(e), uri);
        }
    }

    private static final class UnavailableMapper extends Mapper<HubUnavailableException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(HubUnavailableException e) {
            return jakarta.ws.rs.core.Response.fromResponse(build(503, ExceptionType.UNAVAILABLE, e.getMessage(), uri))
                    .header("Retry-After", "1").build();
        }
    }

    private static final class WebApplicationExceptionMapper extends Mapper<WebApplicationException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(WebApplicationException e) {
            int status = e.getResponse().getStatus();
            String message;
            ExceptionType type = ExceptionType.INVALID_PARAMETER;
            if (e instanceof NotFoundException) {
                message = "there is no endpoint at " + (uri == null ? "this path" : "/" + uri.getPath());
                type = ExceptionType.DATA_NOT_FOUND;
            } else if (e instanceof NotAllowedException) {
                message = "this endpoint does not take that method; allowed: " + e.getResponse().getAllowedMethods();
            } else if (e instanceof NotSupportedException) {
                message = "the body must be JSON: send Content-Type: application/json";
                type = ExceptionType.BAD_PAYLOAD;
            } else if (e instanceof NotAcceptableException) {
                message = "this endpoint answers with application/json only";
            } else if (status >= 500) {
                return new FaultMapper().toResponse(e);
            } else {
                message = e.getResponse().getStatusInfo().getReasonPhrase();
            }
            jakarta.ws.rs.core.Response response = build(status, type, message, uri);
            if (e instanceof NotAllowedException) {
                return jakarta.ws.rs.core.Response.fromResponse(response)
                        .allow(e.getResponse().getAllowedMethods()).build();
            }
            return response;
        }
    }

    private static final class FaultMapper extends Mapper<Throwable> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(Throwable e) {
            return build(500, ExceptionType.GENERIC, faultMessage(uri == null ? "?" : "/" + uri.getPath(), e), uri);
        }
    }
}
