package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.protocol.RequestException;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.glassfish.grizzly.http.Method;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;

/**
 * Which web pages may use the Event Handler from another origin ({@code http.cors-origins}), and the CORS
 * headers that let a browser show them the answers.
 *
 * <p>A request from an origin that is not allowed is refused with 403 whatever its method, not only left
 * without CORS headers: a page can send a POST without a preflight ({@code fetch} in {@code no-cors} mode
 * with a body of no content type, which the publish endpoint takes as JSON), and the browser's blocking
 * of the answer would not undo the publish. Requests without {@code Origin} (every non-browser client) and
 * same-origin ones are not concerned.
 *
 * <p>A preflight ({@code OPTIONS} with {@code Access-Control-Request-Method}) is answered here, on the
 * selector thread, with 204 for an allowed origin, whatever the path.
 */
public final class CorsPolicy {
    private static final String ORIGIN = "Origin";
    private static final String ALLOWED_METHODS = "GET, POST, PUT, DELETE";
    /**
     * What our clients send: JSON bodies, resume points, idempotency keys; {@code Cache-Control} because
     * EventSource polyfills add it.
     */
    private static final String ALLOWED_HEADERS = "Content-Type, Last-Event-ID, Idempotency-Key, Cache-Control";
    /** A page sees only CORS-safelisted response headers unless told; a 503 or refused stream says when to retry. */
    private static final String EXPOSED_HEADERS = "Retry-After";
    /** Long enough that a page publishing steadily preflights rarely; the browsers cap it at 2 h (Chromium) or 24 h. */
    private static final String PREFLIGHT_MAX_AGE_SECONDS = "3600";

    private final boolean any;
    private final Set<String> origins;

    /** @param origins the allowed origins ({@code scheme://host[:port]}), {@code *} for any; empty: none */
    public CorsPolicy(List<String> origins) {
        this.any = origins.contains("*");
        this.origins = origins.stream().map(origin -> origin.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
    }

    /**
     * Adds the CORS headers an allowed cross-origin request needs to its response, or answers it here.
     *
     * @return whether the request goes on to its handler: false for a preflight, answered 204
     * @throws RequestException 403 for a cross-origin request from an origin that is not allowed
     */
    public boolean admit(Request request, Response response) {
        String origin = request.getHeader(ORIGIN);
        if (origin == null || sameOrigin(request, origin)) {
            return true;
        }
        if (!any && !origins.contains(origin.toLowerCase(Locale.ROOT))) {
            throw RequestException.forbidden("pages from the origin '" + origin + "' may not use this Event Handler"
                    + (origins.isEmpty() ? "; cross-origin requests are off (http.cors-origins)"
                    : " (http.cors-origins)"));
        }
        response.setHeader("Access-Control-Allow-Origin", any ? "*" : origin);
        response.addHeader("Vary", ORIGIN);
        if (request.getMethod() == Method.OPTIONS && request.getHeader("Access-Control-Request-Method") != null) {
            response.setStatus(204);
            response.setHeader("Access-Control-Allow-Methods", ALLOWED_METHODS);
            response.setHeader("Access-Control-Allow-Headers", ALLOWED_HEADERS);
            response.setHeader("Access-Control-Max-Age", PREFLIGHT_MAX_AGE_SECONDS);
            // Chromium asks before a public page may reach a private address, as a plant's broker usually is.
            if ("true".equalsIgnoreCase(request.getHeader("Access-Control-Request-Private-Network"))) {
                response.setHeader("Access-Control-Allow-Private-Network", "true");
            }
            return false;
        }
        response.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
        return true;
    }

    /** Browsers send {@code Origin} on their same-origin POSTs too; such a page is this server's own. */
    private static boolean sameOrigin(Request request, String origin) {
        String host = request.getHeader("Host");
        return host != null && origin.equalsIgnoreCase((request.isSecure() ? "https://" : "http://") + host);
    }
}
