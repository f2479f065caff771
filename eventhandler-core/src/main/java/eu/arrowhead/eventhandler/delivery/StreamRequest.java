package eu.arrowhead.eventhandler.delivery;

import eu.arrowhead.eventhandler.topic.SubscriberFilter;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What an SSE stream asked for, from which its filter is made: at its open, and again whenever the
 * Authorization system's rules change while it is open ({@link StreamAuthorization}).
 *
 * @param subscriber the subscribing system, lower case; {@code null} for an insecure-mode stream that names none
 * @param sources    its {@code source} parameters, lower case; empty for any source
 * @param metaData   its {@code meta.KEY} parameters: keys exact, values lower case
 */
record StreamRequest(String subscriber, Set<String> sources, Map<String, String> metaData) {

    StreamRequest {
        sources = Set.copyOf(sources);
        metaData = Map.copyOf(metaData);
    }

    /**
     * The filter in effect given the publishers the subscriber is authorized for: its own sources narrowed to
     * them.
     *
     * @param authorized empty when the subscriber may receive from any publisher
     * @return {@code null} when that leaves no publisher (a {@link SubscriberFilter} with no source means any)
     */
    /** Why a stream gets nothing, for its 403 or the comment that ends it: {@link #filter} left no publisher. */
    String unauthorized() {
        return "the Authorization system authorizes system '" + subscriber + "' to receive events from "
                + (sources.isEmpty() ? "no publisher" : "none of the sources " + sources);
    }

    SubscriberFilter filter(Optional<Set<String>> authorized) {
        if (authorized.isEmpty()) {
            return new SubscriberFilter(sources, metaData);
        }
        Set<String> allowed = new LinkedHashSet<>(authorized.get());
        if (!sources.isEmpty()) {
            allowed.retainAll(sources);
        }
        return allowed.isEmpty() ? null : new SubscriberFilter(allowed, metaData);
    }
}
