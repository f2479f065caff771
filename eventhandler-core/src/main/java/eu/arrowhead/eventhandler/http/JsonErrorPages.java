package eu.arrowhead.eventhandler.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import eu.arrowhead.eventhandler.api.ErrorMessage;
import eu.arrowhead.eventhandler.api.ExceptionType;
import org.glassfish.grizzly.http.server.ErrorPageGenerator;
import org.glassfish.grizzly.http.server.Request;

/**
 * Errors that Grizzly answers by itself, before any handler runs (a malformed request line, headers over
 * {@code server.max-header-bytes}), get the same ErrorMessage JSON as every other error, not an HTML page.
 */
public final class JsonErrorPages implements ErrorPageGenerator {

    @Override
    public String generate(Request request, int status, String reasonPhrase, String description, Throwable e) {
        request.getResponse().setContentType("application/json");
        ExceptionType type = status >= 500 ? ExceptionType.GENERIC : ExceptionType.INVALID_PARAMETER;
        try {
            return JsonMapper.get().writeValueAsString(new ErrorMessage(reasonPhrase, status, type,
                    request.getRequestURI()));
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
