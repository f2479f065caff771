package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.api.EventTypeResponse;
import eu.arrowhead.eventhandler.api.SubscriptionRequest;
import eu.arrowhead.eventhandler.api.SubscriptionResponse;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.api.SystemResponse;
import eu.arrowhead.eventhandler.protocol.EventTypeRule;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.net.URI;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A validated push subscription: what {@code POST /eventhandler/subscribe} asked for, checked against the
 * API's rules. Immutable; a subscription that changes is replaced by a new instance with the same id.
 *
 * @param id            the Event Handler's id for it
 * @param request       the request as accepted, kept for responses and the store
 * @param topicKey      the event type in lower case
 * @param subscriberKey the subscriber's system name in lower case
 * @param startMillis   events with an earlier timeStamp are not sent; {@link Long#MIN_VALUE} for no bound
 * @param endMillis     events with a later timeStamp are not sent; {@link Long#MAX_VALUE} for no bound
 * @param sourceKeys    the publishers asked for, lower case; empty for any
 * @param notifyTarget  where events go: the subscriber's address, port and notify URI, each checked
 * @param createdAt     when it was created
 * @param updatedAt     when it last changed
 */
public record PushSubscription(
        long id,
        SubscriptionRequest request,
        String topicKey,
        String subscriberKey,
        long startMillis,
        long endMillis,
        Set<String> sourceKeys,
        NotifyTarget notifyTarget,
        Instant createdAt,
        Instant updatedAt) {

    private static final int MAX_NAME_LENGTH = 255;
    /** A source key no event has (system names are never empty): matches nothing. */
    static final String NO_SOURCE = "";

    /**
     * Validates a request.
     *
     * @throws RequestException 400 naming the first rule the request breaks
     */
    public static PushSubscription validate(SubscriptionRequest request, long id, Instant createdAt, Instant now) {
        if (request == null) {
            throw RequestException.badPayload("the body must be a SubscriptionRequest JSON object");
        }
        String problem = EventTypeRule.problem(request.eventType());
        if (problem != null) {
            throw RequestException.badPayload(problem);
        }
        SystemRequest subscriber = request.subscriberSystem();
        if (subscriber == null) {
            throw RequestException.badPayload("subscriberSystem is required");
        }
        String subscriberKey = systemKey(subscriber.systemName(), "subscriberSystem.systemName");
        if (subscriber.address() == null || subscriber.address().isBlank()
                || subscriber.address().length() > MAX_NAME_LENGTH) {
            throw RequestException.badPayload("subscriberSystem.address is required (1 to " + MAX_NAME_LENGTH
                    + " characters): events are POSTed to it");
        }
        if (subscriber.port() == null || subscriber.port() < 1 || subscriber.port() > 65_535) {
            throw RequestException.badPayload("subscriberSystem.port is required, from 1 to 65535");
        }
        String notifyUri = request.notifyUri();
        if (notifyUri == null || notifyUri.isBlank()) {
            throw RequestException.badPayload("notifyUri is required");
        }
        NotifyTarget notifyTarget = NotifyTarget.of(subscriber.address(), subscriber.port(), notifyUri);
        boolean matchMetaData = Boolean.TRUE.equals(request.matchMetaData());
        Map<String, String> filter = request.filterMetaData();
        if (matchMetaData && (filter == null || filter.isEmpty())) {
            throw RequestException.badPayload("matchMetaData is true but filterMetaData is empty");
        }
        if (filter != null) {
            for (Map.Entry<String, String> entry : filter.entrySet()) {
                if (entry.getKey().isEmpty() || entry.getValue() == null) {
                    throw RequestException.badPayload("filterMetaData keys may not be empty nor values null");
                }
            }
        }
        long start = date(request.startDate(), "startDate", Long.MIN_VALUE);
        long end = date(request.endDate(), "endDate", Long.MAX_VALUE);
        if (end < start) {
            throw RequestException.badPayload("endDate is before startDate");
        }
        Set<String> sourceKeys = new LinkedHashSet<>();
        List<SystemRequest> sources = request.sources() == null ? List.of() : request.sources();
        for (SystemRequest source : sources) {
            if (source == null) {
                throw RequestException.badPayload("sources may not contain null");
            }
            sourceKeys.add(systemKey(source.systemName(), "sources[].systemName"));
        }
        PushSubscription subscription = new PushSubscription(id, request,
                request.eventType().toLowerCase(Locale.ROOT), subscriberKey, start, end, Set.copyOf(sourceKeys),
                notifyTarget, createdAt, now);
        subscription.target(false);
        return subscription;
    }

    private static String systemKey(String name, String field) {
        if (name == null || name.isBlank() || name.length() > MAX_NAME_LENGTH) {
            throw RequestException.badPayload(field + " is required (1 to " + MAX_NAME_LENGTH + " characters)");
        }
        return name.toLowerCase(Locale.ROOT);
    }

    /** Arrowhead 4.x writes ISO-8601 instants; an offset other than Z is accepted too. */
    private static long date(String value, String field, long absent) {
        if (value == null || value.isBlank()) {
            return absent;
        }
        // ArithmeticException: Instant takes years up to a billion, beyond what milliseconds since 1970 hold.
        try {
            return Instant.parse(value).toEpochMilli();
        } catch (DateTimeParseException | ArithmeticException e) {
            try {
                return OffsetDateTime.parse(value).toInstant().toEpochMilli();
            } catch (DateTimeParseException | ArithmeticException e2) {
                throw RequestException.badPayload(field + " '" + value
                        + "' is not an ISO-8601 instant such as 2026-11-21T10:00:00Z");
            }
        }
    }

    /**
     * Where events are POSTed: the subscriber's address and port with the notify URI, as 4.x builds it, from
     * the parts {@link NotifyTarget} checked.
     *
     * @throws RequestException 400 if they do not make a URL
     */
    public URI target(boolean https) {
        return notifyTarget.uri(https);
    }

    /** Whether the metadata filter applies. */
    public boolean matchMetaData() {
        return Boolean.TRUE.equals(request.matchMetaData());
    }

    /**
     * The publishers whose events are sent: those asked for, narrowed to those the subscriber may receive
     * from. Empty means any; an authorization that leaves none is a set with no match ({@link #NO_SOURCE}).
     */
    public Set<String> effectiveSources(Optional<Set<String>> authorized) {
        if (authorized.isEmpty()) {
            return sourceKeys;
        }
        Set<String> allowed = new LinkedHashSet<>(authorized.get());
        if (!sourceKeys.isEmpty()) {
            allowed.retainAll(sourceKeys);
        }
        return allowed.isEmpty() ? Set.of(NO_SOURCE) : Set.copyOf(allowed);
    }

    /**
     * The subscription as the management endpoints show it, with the sources in effect.
     *
     * @param pausedBecause why its delivery is paused, or {@code null}
     */
    public SubscriptionResponse toResponse(Set<String> effectiveSources, String pausedBecause) {
        SystemRequest subscriber = request.subscriberSystem();
        List<SystemResponse> sources = null;
        if (!effectiveSources.isEmpty()) {
            List<SystemRequest> asked = request.sources() == null ? List.of() : request.sources();
            sources = effectiveSources.stream().filter(key -> !key.equals(NO_SOURCE))
                    .map(key -> asked.stream().filter(source -> source.systemName().equalsIgnoreCase(key))
                            .findFirst().map(PushSubscription::system)
                            .orElse(new SystemResponse(null, key, null, null, null, null, null, null)))
                    .toList();
        }
        return new SubscriptionResponse(id, new EventTypeResponse(null, request.eventType(), null, null),
                system(subscriber), request.filterMetaData(), request.notifyUri(), matchMetaData(),
                request.startDate(), request.endDate(), sources, createdAt.toString(), updatedAt.toString(),
                pausedBecause == null ? null : Boolean.TRUE, pausedBecause);
    }

    private static SystemResponse system(SystemRequest system) {
        return new SystemResponse(null, system.systemName(), system.address(), system.port(),
                system.authenticationInfo(), system.metadata(), null, null);
    }
}
