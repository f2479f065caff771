package eu.arrowhead.eventhandler.http;

import java.util.concurrent.atomic.AtomicInteger;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.Grizzly;
import org.glassfish.grizzly.attributes.Attribute;
import org.glassfish.grizzly.http.server.Request;

/**
 * Connections whose filter chain is suspended while a request is served away from the read that parsed it: on a
 * worker, or held while its client does not read its answers ({@link UnreadAnswers}). Grizzly keeps the rest of
 * what it read, the client's next pipelined requests, stored in the chain, parses it when that request's response
 * ends, and reads the connection again after that. Until then nothing may ask it to read: the read would meet the
 * stored requests, and Grizzly's chain fails with a {@code ClassCastException} (a stored remainder of an unparsed
 * request cannot be appended to), dropping the connection with its requests neither answered nor published.
 *
 * <p>That happened when a request whose body came in parts ended on the selector: Grizzly parsed the pipelined
 * requests behind it at once, one of them was held, and the connection was then asked to read on for the body
 * that had already come ({@code PipeliningTest}, about one run in four).
 *
 * <p>A count, not a flag: resuming one such request has Grizzly parse the requests stored behind it on the same
 * thread, before the resume returns, and one of those may be served away in turn (Jersey resumes a response it has
 * written from inside its handler, on the worker). The count goes down once the resume has returned, so that it
 * never reads zero while a thread is still parsing the stored requests.
 */
final class SuspendedChains {
    private static final Attribute<AtomicInteger> SUSPENDED = Grizzly.DEFAULT_ATTRIBUTE_BUILDER.createAttribute(
            SuspendedChains.class.getName() + ".suspended", AtomicInteger::new);

    private SuspendedChains() {
    }

    /** Suspends the chain that parsed {@code request} until its response ends. */
    static void suspend(Request request) {
        suspended(request);
        request.getContext().suspend();
    }

    /** Notes that the chain that parsed {@code request} is suspended already (it waited for its body). */
    static void suspended(Request request) {
        SUSPENDED.get(request.getContext().getConnection()).incrementAndGet();
    }

    /**
     * Called once the suspended request's response has been resumed (or has ended otherwise), and Grizzly has gone
     * on with the chain. Takes the connection, not the request: by then the request may have been recycled.
     */
    static void ended(Connection<?> connection) {
        SUSPENDED.get(connection).decrementAndGet();
    }

    /** Whether a read asked for now could meet requests that Grizzly still holds for a suspended chain. */
    static boolean holdsRequests(Connection<?> connection) {
        return SUSPENDED.get(connection).get() > 0;
    }
}
