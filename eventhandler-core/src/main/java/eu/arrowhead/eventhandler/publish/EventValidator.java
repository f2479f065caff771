package eu.arrowhead.eventhandler.publish;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.protocol.EventEncoding;
import eu.arrowhead.eventhandler.protocol.EventTypeRule;
import eu.arrowhead.eventhandler.protocol.RequestException;
import eu.arrowhead.eventhandler.topic.IncomingEvent;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;

/**
 * Checks a publish request against the API's rules and encodes it for the hub. Every rule that fails
 * becomes a {@link RequestException} whose message names the field and the limit.
 */
public final class EventValidator {
    private static final int MAX_NAME_LENGTH = 255;

    private final int maxPayloadBytes;
    private final Duration timestampTolerance;

    public EventValidator(int maxPayloadBytes, Duration timestampTolerance) {
        this.maxPayloadBytes = maxPayloadBytes;
        this.timestampTolerance = timestampTolerance;
    }

    /**
     * Validates one event and encodes it.
     *
     * @param where prefix for messages, such as {@code "event 3: "} in a batch, or empty
     */
    public IncomingEvent validate(EventPublishRequest request, Instant now, String where) {
        if (request == null) {
            throw RequestException.badPayload(where + "an event must be a JSON object, not null");
        }
        String eventType = request.eventType();
        String problem = EventTypeRule.problem(eventType);
        if (problem != null) {
            throw RequestException.badPayload(where + problem);
        }
        if (EventTypeRule.reserved(eventType)) {
            throw RequestException.badPayload(where + "eventType may not start with '" + EventTypeRule.RESERVED_PREFIX
                    + "': that prefix is reserved for the Event Handler's own notices");
        }
        String payload = request.payload();
        if (payload == null) {
            throw RequestException.badPayload(where + "payload is required (a string; it may be empty)");
        }
        int payloadBytes = utf8Length(payload);
        if (payloadBytes > maxPayloadBytes) {
            throw RequestException.tooLarge(where + "payload is " + payloadBytes + " bytes; the limit is "
                    + maxPayloadBytes + " (publish.max-payload-bytes)");
        }
        Map<String, String> metaData = request.metaData();
        if (metaData != null) {
            for (Map.Entry<String, String> entry : metaData.entrySet()) {
                if (entry.getKey().isEmpty()) {
                    throw RequestException.badPayload(where + "metaData keys may not be empty");
                }
                if (entry.getValue() == null) {
                    throw RequestException.badPayload(where + "metaData '" + entry.getKey()
                            + "' must be a string, not null");
                }
            }
        }
        SystemRequest source = request.source();
        String sourceKey = null;
        if (source != null) {
            String name = source.systemName();
            if (name == null || name.isBlank() || name.length() > MAX_NAME_LENGTH) {
                throw RequestException.badPayload(where + "source.systemName is required when source is given"
                        + " (1 to " + MAX_NAME_LENGTH + " characters)");
            }
            if (source.port() != null && (source.port() < 0 || source.port() > 65_535)) {
                throw RequestException.badPayload(where + "source.port must be from 0 to 65535");
            }
            sourceKey = name.toLowerCase(Locale.ROOT);
        }
        Instant timeStamp = timeStamp(request.timeStamp(), now, where);

        byte[] json = EventEncoding.withIdZero(eventType, payload, metaData, source, timeStamp.toString());
        return new IncomingEvent(eventType, eventType.toLowerCase(Locale.ROOT), sourceKey,
                metaData == null ? Map.of() : metaData, timeStamp.toEpochMilli(), json);
    }

    private Instant timeStamp(String given, Instant now, String where) {
        if (given == null) {
            return now.truncatedTo(ChronoUnit.MILLIS);
        }
        Instant instant;
        try {
            instant = Instant.parse(given);
        } catch (DateTimeParseException e) {
            throw RequestException.badPayload(where + "timeStamp '" + given
                    + "' is not an ISO-8601 instant such as 2026-11-21T10:00:00Z");
        }
        Duration offset = Duration.between(now, instant).abs();
        if (offset.compareTo(timestampTolerance) > 0) {
            throw RequestException.badPayload(where + "timeStamp " + given + " is " + offset.toSeconds()
                    + " s away from the server's clock (" + now + "); the limit is "
                    + timestampTolerance.toSeconds() + " s (publish.timestamp-tolerance-seconds)");
        }
        return instant;
    }

    private static int utf8Length(String s) {
        int bytes = s.length();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                if (c < 0x800) {
                    bytes += 1;
                } else if (Character.isHighSurrogate(c)) {
                    bytes += 2;
                    i++;
                } else {
                    bytes += 2;
                }
            }
        }
        return bytes;
    }
}
