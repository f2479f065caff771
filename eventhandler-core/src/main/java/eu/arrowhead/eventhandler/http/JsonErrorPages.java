package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.protocol.ErrorBodies;
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
        return ErrorBodies.jsonText(status, ErrorBodies.typeOf(status), reasonPhrase, request.getRequestURI());
    }
}
