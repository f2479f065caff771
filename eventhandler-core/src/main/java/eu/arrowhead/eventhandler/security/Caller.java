package eu.arrowhead.eventhandler.security;

import jakarta.ws.rs.container.ContainerRequestContext;
import org.glassfish.grizzly.http.server.Request;

/**
 * Who sent a request: in secure mode the system named by the first label of its client certificate's CN;
 * in insecure mode {@link #ANONYMOUS}. The front handler attaches it to every request as the attribute
 * {@link #ATTRIBUTE}; Jersey resources read it back with {@link #of(ContainerRequestContext)}.
 *
 * @param systemName the identity, lower case; {@code null} for {@link #ANONYMOUS}
 */
public record Caller(String systemName) {

    /** The caller of a request in insecure mode, or one without a certificate. */
    public static final Caller ANONYMOUS = new Caller(null);

    /** The request attribute (a Jersey request property too) that holds the caller. */
    public static final String ATTRIBUTE = Caller.class.getName();

    /** The caller attached to a Grizzly request, or {@link #ANONYMOUS}. */
    public static Caller of(Request request) {
        return request.getAttribute(ATTRIBUTE) instanceof Caller caller ? caller : ANONYMOUS;
    }

    /** The caller attached to a Jersey request, or {@link #ANONYMOUS}. */
    public static Caller of(ContainerRequestContext request) {
        return request.getProperty(ATTRIBUTE) instanceof Caller caller ? caller : ANONYMOUS;
    }

    public boolean anonymous() {
        return systemName == null;
    }
}
