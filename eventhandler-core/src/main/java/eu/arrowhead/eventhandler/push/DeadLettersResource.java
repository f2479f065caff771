package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.DeadLetterListResponse;
import eu.arrowhead.eventhandler.api.DeadLetterResponse;
import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.api.RedeliveryResponse;
import eu.arrowhead.eventhandler.api.SubscriptionResponse;
import eu.arrowhead.eventhandler.protocol.QueryParameters;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.protocol.UnavailableException;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The management of push subscriptions' dead letters: {@code GET mgmt/subscriptions/{id}/dead-letters},
 * {@code POST .../dead-letters/redeliver} and {@code DELETE .../dead-letters} (all of them, or {@code ?eventId=N}),
 * and {@code POST mgmt/subscriptions/{id}/resume} for a paused subscription. Guarded, as everything under
 * {@code mgmt}, by {@link eu.arrowhead.eventhandler.security.ManagementAccess}. An id that is no number is a 400, a
 * subscription or a letter that does not exist a 404. The lists are the single node's or the cluster's
 * ({@link DeadLetterLists}), answered alike; without an event log ({@code store.mode=off}) there are no dead letters,
 * and every one of these is a 404 that says so.
 */
@Path("eventhandler")
public final class DeadLettersResource {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLettersResource.class);
    /** Letters a list answers with unless asked for fewer or more: some 130 KB of JSON. */
    private static final int DEFAULT_PAGE = 100;
    /** The most letters one list answers with: some 1.3 MB of JSON, of a letter's 256 bytes of answer at most. */
    private static final int MAX_PAGE = 1_000;

    private final PushSubscriptions subscriptions;
    private final DeadLetterLists letters;

    /** @param letters the subscriptions' dead-letter lists, or {@code null} where there are none */
    public DeadLettersResource(PushSubscriptions subscriptions, DeadLetterLists letters) {
        this.subscriptions = subscriptions;
        this.letters = letters;
    }

    /**
     * A page of the subscription's dead letters, in event id order: {@code limit} (default 100, at most 1 000) after
     * {@code afterEventId} (default 0); {@code count} is all of them.
     */
    @GET
    @Path("mgmt/subscriptions/{id}/dead-letters")
    @Produces(MediaType.APPLICATION_JSON)
    public DeadLetterListResponse list(@PathParam("id") String id, @Context UriInfo uri) {
        long subscription = existing(id);
        String limitText = QueryParameters.single(uri.getQueryParameters(), "limit");
        int limit = limitText == null ? DEFAULT_PAGE
                : (int) QueryParameters.number(limitText, "limit", 1, MAX_PAGE, "");
        String afterText = QueryParameters.single(uri.getQueryParameters(), "afterEventId");
        long after = afterText == null ? 0 : QueryParameters.number(afterText, "afterEventId", 0, Long.MAX_VALUE, "");
        List<DeadLetterResponse> page = stored(() -> letters.list(subscription, after, limit)).stream()
                .map(letter -> new DeadLetterResponse(letter.eventId(), letter.eventType(), letter.status(),
                        letter.answer(), Instant.ofEpochMilli(letter.atMillis()).toString()))
                .toList();
        return new DeadLetterListResponse(page, stored(() -> letters.count(subscription)));
    }

    /** Sends the dead letters (all, or {@code ?eventId=N}) again and resumes the subscription if it was paused. */
    @POST
    @Path("mgmt/subscriptions/{id}/dead-letters/redeliver")
    @Produces(MediaType.APPLICATION_JSON)
    public RedeliveryResponse redeliver(@PathParam("id") String id, @Context UriInfo uri) {
        long subscription = existing(id);
        OptionalLong eventId = eventId(uri);
        return stored(() -> letters.redeliver(subscription, eventId)).orElseThrow(() -> unknown(subscription));
    }

    /** Drops the dead letters (all, or {@code ?eventId=N}); 200 with no body. */
    @DELETE
    @Path("mgmt/subscriptions/{id}/dead-letters")
    public Response drop(@PathParam("id") String id, @Context UriInfo uri) {
        long subscription = existing(id);
        OptionalLong eventId = eventId(uri);
        stored(() -> letters.drop(subscription, eventId));
        return Response.ok().build();
    }

    /** Resumes a paused subscription from the event after the last it took or set aside; the subscription. */
    @POST
    @Path("mgmt/subscriptions/{id}/resume")
    @Produces(MediaType.APPLICATION_JSON)
    public SubscriptionResponse resume(@PathParam("id") String id) {
        long subscription = existing(id);
        stored(() -> letters.resume(subscription)).orElseThrow(() -> unknown(subscription));
        return subscriptions.get(subscription).orElseThrow(() -> unknown(subscription));
    }

    /** The subscription's id, checked: a number, of a subscription there is, with dead-letter lists. */
    private long existing(String text) {
        long id = QueryParameters.number(text, "id", 1, Long.MAX_VALUE, "");
        if (letters == null) {
            throw new RequestException(404, ExceptionType.DATA_NOT_FOUND, "there are no dead letters: push"
                    + " subscriptions have a cursor in an event log only with an event store or in cluster mode");
        }
        if (subscriptions.get(id).isEmpty()) {
            throw unknown(id);
        }
        return id;
    }

    private static OptionalLong eventId(UriInfo uri) {
        String text = QueryParameters.single(uri.getQueryParameters(), "eventId");
        return text == null ? OptionalLong.empty()
                : OptionalLong.of(QueryParameters.number(text, "eventId", 1, Long.MAX_VALUE, ""));
    }

    private static RequestException unknown(long id) {
        return new RequestException(404, ExceptionType.DATA_NOT_FOUND, "there is no push subscription with id " + id);
    }

    /** What the store answers; a store that cannot answer now is a 503, never a 500. */
    private static <T> T stored(Supplier<T> work) {
        try {
            return work.get();
        } catch (RequestException | UnavailableException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("the push dead letters cannot be read or written now: {}", e.toString());
            throw new UnavailableException("the push dead letters cannot be read or written now; try again");
        }
    }
}
