package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.diagnostics.LogThrottle;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.time.Duration;
import org.glassfish.grizzly.http.server.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses a request an Event Handler pushed to a subscriber: every push carries {@link #HEADER}, and an Event
 * Handler is never a push subscriber. The pushed 4.x {@code EventDTO} is a valid publish, so a subscription
 * whose notify URI is a publish endpoint, of this Event Handler through a name or proxy its subscribe-time
 * checks could not see, or of another Event Handler that pushes back, would publish each event again and push
 * it again without end. Refused at the front door, for every path: such a loop ends at its first hop.
 *
 * <p>Each refusal is logged at most once a minute with the number held back, since the sender retries and the
 * pushes of a busy topic come as fast as events are published.
 */
public final class PushLoopGuard {
    /** The header every push carries; its value is the number of Event Handlers the request passed, 1. */
    public static final String HEADER = "Eventhandler-Push";
    private static final Logger LOG = LoggerFactory.getLogger(PushLoopGuard.class);

    private final LogThrottle refusals = new LogThrottle(Duration.ofMinutes(1));

    /**
     * @throws RequestException 400 if the request was pushed by an Event Handler
     */
    public void check(Request request) {
        if (request.getHeader(HEADER) == null) {
            return;
        }
        long held = refusals.pass();
        if (held >= 0) {
            // The header's value is the sender's text: it is not logged.
            LOG.warn("refused a request pushed by an Event Handler ({}) from {} to {}: a push subscription there"
                    + " names an Event Handler's endpoint as its notify URI; remove it ({} more such refusals in the"
                    + " last {} s were not logged)", HEADER, request.getRemoteAddr(), request.getRequestURI(),
                    held, refusals.intervalSeconds());
        }
        throw new RequestException(400, ExceptionType.INVALID_PARAMETER, "the request carries " + HEADER
                + ": an Event Handler pushed it to a subscriber, and an Event Handler takes no pushed request (a push"
                + " subscription whose notify URI is an Event Handler's publish would loop); remove that subscription");
    }
}
