package eu.arrowhead.eventhandler.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.ErrorBodies;
import eu.arrowhead.eventhandler.protocol.JsonMapper;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.UriInfo;
import jakarta.ws.rs.ext.ExceptionMapper;
import java.io.IOException;
import java.util.List;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;

/**
 * The JAX-RS exception mappers, which turn what a resource throws into its {@link ErrorBodies} answer, and the
 * answer to a request refused before its body was read.
 */
public final class ErrorResponses {
    private ErrorResponses() {
    }

    /** The JAX-RS exception mappers. */
    public static List<Object> mappers() {
        return List.of(new RequestExceptionMapper(), new JsonExceptionMapper(), new UnavailableMapper(),
                new WebApplicationExceptionMapper(), new FaultMapper());
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
        ErrorBodies.write(response, e.status(), e.exceptionType(), e.getMessage(), request.getRequestURI(),
                retryAfterSeconds);
    }

    static jakarta.ws.rs.core.Response build(int status, ExceptionType exceptionType, String message, UriInfo uri) {
        String origin = uri == null ? null : "/" + uri.getPath();
        return jakarta.ws.rs.core.Response.status(status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(ErrorBodies.message(status, exceptionType, message, origin))
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

    private static final class UnavailableMapper extends Mapper<UnavailableException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(UnavailableException e) {
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
            return build(500, ExceptionType.GENERIC, ErrorBodies.fault(uri == null ? "?" : "/" + uri.getPath(), e), uri);
        }
    }
}
