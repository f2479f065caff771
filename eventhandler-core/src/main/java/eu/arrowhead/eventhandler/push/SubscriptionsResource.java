package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SubscriptionListResponse;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SubscriptionResponse;
import eu.arrowhead.eventhandler.protocol.EventTypeRule;
import eu.arrowhead.eventhandler.protocol.QueryParameters;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.security.Authorizer;
import eu.arrowhead.eventhandler.security.Caller;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.util.Locale;
import java.util.Set;

/**
 * The Arrowhead 4.x push subscription endpoints: {@code POST subscribe}, {@code DELETE unsubscribe},
 * {@code GET/PUT/DELETE mgmt/subscriptions[/{id}]} and {@code POST publish/authupdate}, with 4.x's
 * parameters and answers (200 with no body where 4.x answers nothing). Each asks the {@link Authorizer} first;
 * the management ones are guarded by {@link eu.arrowhead.eventhandler.security.ManagementAccess}.
 */
@Path("eventhandler")
public final class SubscriptionsResource {
    private static final Set<String> SORT_FIELDS = Set.of("id", "createdAt", "updatedAt");

    private final PushSubscriptions subscriptions;
    private final Authorizer authorizer;

    public SubscriptionsResource(PushSubscriptions subscriptions, Authorizer authorizer) {
        this.subscriptions = subscriptions;
        this.authorizer = authorizer;
    }

    /** Creates or replaces the subscription of this event type and subscriber; 200 with no body, as 4.x. */
    @POST
    @Path("subscribe")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response subscribe(SubscriptionRequest request, @Context ContainerRequestContext context) {
        requireSubscribe(request, context);
        subscriptions.subscribe(request);
        return Response.ok().build();
    }

    /** Removes the subscription, if there is one: 200 either way, as 4.x. */
    @DELETE
    @Path("unsubscribe")
    public Response unsubscribe(@Context UriInfo uri, @Context ContainerRequestContext context) {
        MultivaluedMap<String, String> query = uri.getQueryParameters();
        String eventType = QueryParameters.single(query, "event_type");
        String problem = EventTypeRule.problem(eventType);
        if (problem != null) {
            throw RequestException.invalidParameter(problem.replace("eventType", "event_type"));
        }
        String systemName = QueryParameters.single(query, "system_name");
        if (systemName == null || systemName.isBlank()) {
            throw RequestException.invalidParameter("system_name is required");
        }
        String address = QueryParameters.single(query, "address");
        Integer port = null;
        String portText = QueryParameters.single(query, "port");
        if (portText != null) {
            port = (int) number(portText, "port", 0, 65_535);
        }
        authorizer.requireUnsubscribe(Caller.of(context), systemName);
        subscriptions.unsubscribe(eventType, systemName, address == null || address.isBlank() ? null : address, port);
        return Response.ok().build();
    }

    /** A page of subscriptions: {@code page} (from 0) with {@code item_per_page}, or neither for all. */
    @GET
    @Path("mgmt/subscriptions")
    @Produces(MediaType.APPLICATION_JSON)
    public SubscriptionListResponse list(@Context UriInfo uri) {
        MultivaluedMap<String, String> query = uri.getQueryParameters();
        String pageText = QueryParameters.single(query, "page");
        String sizeText = QueryParameters.single(query, "item_per_page");
        if ((pageText == null) != (sizeText == null)) {
            throw RequestException.invalidParameter("page and item_per_page must be given together, or neither");
        }
        Integer page = pageText == null ? null : (int) number(pageText, "page", 0, Integer.MAX_VALUE);
        Integer size = sizeText == null ? null : (int) number(sizeText, "item_per_page", 1, Integer.MAX_VALUE);
        String direction = QueryParameters.single(query, "direction");
        boolean ascending = true;
        if (direction != null) {
            switch (direction.toUpperCase(Locale.ROOT)) {
                case "ASC" -> ascending = true;
                case "DESC" -> ascending = false;
                default -> throw RequestException.invalidParameter("direction must be ASC or DESC, not '"
                        + direction + "'");
            }
        }
        String sortField = QueryParameters.single(query, "sort_field");
        if (sortField == null) {
            sortField = "id";
        } else if (!SORT_FIELDS.contains(sortField)) {
            throw RequestException.invalidParameter("sort_field must be one of id, createdAt, updatedAt, not '"
                    + sortField + "'");
        }
        return subscriptions.list(page, size, ascending, sortField);
    }

    /** One subscription; an unknown id is a 400, as 4.x. */
    @GET
    @Path("mgmt/subscriptions/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public SubscriptionResponse get(@PathParam("id") String id) {
        long checked = id(id);
        return subscriptions.get(checked).orElseThrow(() -> unknown(checked));
    }

    /** Replaces a subscription; an unknown id is a 400, as 4.x. */
    @PUT
    @Path("mgmt/subscriptions/{id}")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public SubscriptionResponse update(@PathParam("id") String id, SubscriptionRequest request) {
        long checked = id(id);
        return subscriptions.update(checked, request).orElseThrow(() -> unknown(checked));
    }

    /** Deletes a subscription; 200 even if there is none, as 4.x. */
    @DELETE
    @Path("mgmt/subscriptions/{id}")
    public Response delete(@PathParam("id") String id) {
        subscriptions.delete(id(id));
        return Response.ok().build();
    }

    /**
     * Arrowhead's {@code SUBSCRIBER_AUTH_UPDATE}: the Authorization system says a subscriber's rules changed
     * (its payload is the subscriber's system id); the sources in effect are recomputed, of push subscriptions
     * and of open SSE streams, before the answer: an event published after it reaches only whom the new rules
     * allow.
     */
    @POST
    @Path("publish/authupdate")
    @Consumes(MediaType.APPLICATION_JSON)
    public Response authorizationUpdate(EventPublishRequest request, @Context ContainerRequestContext context) {
        authorizer.requireAuthUpdate(Caller.of(context));
        if (request == null) {
            throw RequestException.badPayload("the body must be an EventPublishRequest JSON object");
        }
        if (!PushSubscriptions.AUTH_UPDATE_EVENT_TYPE.equalsIgnoreCase(request.eventType())) {
            throw RequestException.badPayload("eventType must be " + PushSubscriptions.AUTH_UPDATE_EVENT_TYPE);
        }
        if (request.payload() == null) {
            throw RequestException.badPayload("payload must be the subscriber's system id");
        }
        number(request.payload().strip(), "payload (the subscriber's system id)", 1, Long.MAX_VALUE);
        // Returns once push subscriptions and open streams receive only from the publishers now allowed.
        authorizer.authorizationChanged();
        return Response.ok().build();
    }

    private void requireSubscribe(SubscriptionRequest request, ContainerRequestContext context) {
        if (request == null) {
            throw RequestException.badPayload("the body must be a SubscriptionRequest JSON object");
        }
        String subscriber = request.subscriberSystem() == null ? null : request.subscriberSystem().systemName();
        if (subscriber == null || subscriber.isBlank()) {
            throw RequestException.badPayload("subscriberSystem.systemName is required");
        }
        authorizer.requireSubscribe(Caller.of(context), subscriber, request.eventType());
    }

    private static long id(String text) {
        return number(text, "id", 1, Long.MAX_VALUE);
    }

    private static RequestException unknown(long id) {
        return RequestException.invalidParameter("there is no subscription with id " + id);
    }

    private static long number(String text, String name, long min, long max) {
        return QueryParameters.number(text, name, min, max, "");
    }
}
