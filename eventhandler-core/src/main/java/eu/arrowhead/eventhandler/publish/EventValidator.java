package eu.arrowhead.eventhandler.publish;

import eu.arrowhead.eventhandler.api.EventPublishRequest;
import eu.arrowhead.eventhandler.api.SystemRequest;
import eu.arrowhead.eventhandler.http.RequestException;
import eu.arrowhead.eventhandler.topic.EventEncoding;
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
    /** Event types of this prefix are the broker's own notices (see {@code ReplayGap}). */
    public static final String RESERVED_PREFIX = "eventhandler.";
    private static final int MAX_NAME_LENGTH = 255;
    private static final boolean[] TYPE_CHARS = new boolean[128];

    static {
        for (char c = 'a'; c <= 'z'; c++) {
            TYPE_CHARS[c] = true;
            TYPE_CHARS[Character.toUpperCase(c)] = true;
        }
        for (char c = '0'; c <= '9'; c++) {
            TYPE_CHARS[c] = true;
        }
        for (char c : "._-:/".toCharArray()) {
            TYPE_CHARS[c] = true;
        }
    }

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
        String problem = eventTypeProblem(eventType);
        if (problem != null) {
            throw RequestException.badPayload(where + problem);
        }
        if (eventType.regionMatches(true, 0, RESERVED_PREFIX, 0, RESERVED_PREFIX.length())) {
            throw RequestException.badPayload(where + "eventType may not start with '" + RESERVED_PREFIX
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

    /** Why {@code eventType} is not a valid event type, or {@code null} if it is. */
    public static String eventTypeProblem(String eventType) {
        if (eventType == null || eventType.isEmpty()) {
            return "eventType is required";
        }
        if (eventType.length() > MAX_NAME_LENGTH) {
            return "eventType is " + eventType.length() + " characters long; the limit is " + MAX_NAME_LENGTH;
        }
        for (int i = 0; i < eventType.length(); i++) {
            char c = eventType.charAt(i);
            if (c >= 128 || !TYPE_CHARS[c]) {
                return "eventType may contain only letters, digits and . _ - : / (found "
                        + describeChar(c) + " at position " + (i + 1) + ")";
            }
        }
        return null;
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

    private static String describeChar(char c) {
        if (c == '\n') {
            return "a line feed";
        }
        if (c == '\r') {
            return "a carriage return";
        }
        if (Character.isISOControl(c) || Character.isWhitespace(c)) {
            return String.format("the character U+%04X", (int) c);
        }
        return "'" + c + "'";
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
