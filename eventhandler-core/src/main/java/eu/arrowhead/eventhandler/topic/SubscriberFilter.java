package eu.arrowhead.eventhandler.topic;

import java.util.Map;
import java.util.Set;

/**
 * What a subscriber wants beyond its topics: events from some sources only, and events whose metadata
 * contain some pairs (values compared case-insensitively). Empty means no restriction.
 *
 * @param sources  source system names, lower case
 * @param metaData required metadata: keys exact, values lower case
 */
public record SubscriberFilter(Set<String> sources, Map<String, String> metaData) {

    public static final SubscriberFilter NONE = new SubscriberFilter(Set.of(), Map.of());

    public SubscriberFilter {
        sources = Set.copyOf(sources);
        metaData = Map.copyOf(metaData);
    }

    /** Whether an event from this source ({@code null}: none) may pass: the part an authorization update changes. */
    public boolean allowsSource(String sourceKey) {
        return sources.isEmpty() || sourceKey != null && sources.contains(sourceKey);
    }

    /** Whether the event passes; called once per event and subscriber, so it allocates nothing. */
    public boolean matches(PublishedEvent event) {
        if (!allowsSource(event.sourceKey())) {
            return false;
        }
        if (!metaData.isEmpty()) {
            Map<String, String> eventMeta = event.metaData();
            for (Map.Entry<String, String> wanted : metaData.entrySet()) {
                String actual = eventMeta.get(wanted.getKey());
                if (actual == null || !actual.equalsIgnoreCase(wanted.getValue())) {
                    return false;
                }
            }
        }
        return true;
    }
}
