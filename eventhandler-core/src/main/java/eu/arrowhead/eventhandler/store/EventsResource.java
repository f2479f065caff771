package eu.arrowhead.eventhandler.store;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.EventTypeRule;
import eu.arrowhead.eventhandler.protocol.QueryParameters;
import eu.arrowhead.eventhandler.protocol.RequestException;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.UriInfo;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code GET /eventhandler/mgmt/events?eventType=&from=&to=&afterId=&limit=}: a page of the event log, oldest
 * first. {@code eventType} may be repeated; {@code from} and {@code to} bound the events' timeStamps
 * (inclusive, ISO-8601 instants). The answer is {@code {"data": [events], "count": n}}, plus
 * {@code "nextAfterId"} when the page is full: ask again with {@code afterId} set to it for the next page.
 */
@Path("eventhandler/mgmt/events")
public final class EventsResource {
    private static final Set<String> PARAMETERS = Set.of("eventType", "from", "to", "afterId", "limit");

    private final EventStore store;
    private final int maxLimit;

    /** @param store the store, or {@code null} when {@code store.mode=off} */
    public EventsResource(EventStore store, int maxLimit) {
        this.store = store;
        this.maxLimit = maxLimit;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public byte[] events(@Context UriInfo uri) {
        MultivaluedMap<String, String> query = uri.getQueryParameters();
        for (String name : query.keySet()) {
            if (!PARAMETERS.contains(name)) {
                throw RequestException.invalidParameter("unknown query parameter '" + name
                        + "'; known: eventType, from, to, afterId, limit");
            }
        }
        Set<String> topicKeys = new LinkedHashSet<>();
        for (String eventType : query.getOrDefault("eventType", List.of())) {
            String problem = EventTypeRule.problem(eventType);
            if (problem != null) {
                throw RequestException.invalidParameter(problem);
            }
            topicKeys.add(eventType.toLowerCase(Locale.ROOT));
        }
        Long from = instant(query, "from");
        Long to = instant(query, "to");
        if (from != null && to != null && from > to) {
            throw RequestException.invalidParameter("from is after to");
        }
        long afterId = number(query, "afterId", 0, 0, Long.MAX_VALUE);
        int limit = (int) number(query, "limit", maxLimit, 1, maxLimit);
        if (store == null) {
            throw new RequestException(404, ExceptionType.DATA_NOT_FOUND, "there is no event log: store.mode is off");
        }
        return page(store.query(topicKeys, from, to, afterId, limit));
    }

    /** The answer's JSON: the events as the log holds them, each already the JSON it was delivered as. */
    private static byte[] page(EventStore.QueryPage page) {
        List<EventStore.LoggedEvent> events = page.events();
        StringBuilder out = new StringBuilder(64 + events.size() * 128).append("{\"data\":[");
        for (int i = 0; i < events.size(); i++) {
            out.append(i == 0 ? "" : ",").append(events.get(i).json());
        }
        out.append("],\"count\":").append(events.size());
        page.nextAfterId().ifPresent(next -> out.append(",\"nextAfterId\":").append(next));
        return out.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    private static Long instant(MultivaluedMap<String, String> query, String name) {
        String value = QueryParameters.single(query, name);
        if (value == null) {
            return null;
        }
        try {
            return Instant.parse(value).toEpochMilli();
        } catch (DateTimeParseException | ArithmeticException e) {
            throw RequestException.invalidParameter(name + " '" + value
                    + "' is not an ISO-8601 instant such as 2026-11-21T10:00:00Z");
        }
    }

    private static long number(MultivaluedMap<String, String> query, String name, long absent, long min, long max) {
        String value = QueryParameters.single(query, name);
        if (value == null) {
            return absent;
        }
        return QueryParameters.number(value, name, min, max, name.equals("limit") ? "store.query-max-events" : "");
    }
}
