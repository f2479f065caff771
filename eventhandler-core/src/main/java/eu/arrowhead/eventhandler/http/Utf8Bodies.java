package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.protocol.Utf8Rule;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;

/**
 * Holds every body a JAX-RS resource reads (subscriptions, their management, authorization updates) to
 * {@link Utf8Rule} before Jackson sees it, as the publish handler does its own. The body has arrived whole
 * within {@code server.max-body-bytes} before a resource runs (see {@link RequestBodies}), so reading it into an
 * array costs no wait and at most that many bytes.
 */
public final class Utf8Bodies implements ReaderInterceptor {
    @Override
    public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
        byte[] body = context.getInputStream().readAllBytes();
        Utf8Rule.require(body);
        context.setInputStream(new ByteArrayInputStream(body));
        return context.proceed();
    }
}
