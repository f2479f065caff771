package eu.arrowhead.eventhandler.protocol;

/**
 * What an event type may be, wherever one comes in: a publish, a stream's or a push subscription's
 * {@code eventType}, a {@code mgmt/events} query, a line of the access list. One rule, so that no event type
 * is accepted in one place and refused in another.
 */
public final class EventTypeRule {
    /** Event types of this prefix are the broker's own notices (see {@code ReplayGap}); no publish may use it. */
    public static final String RESERVED_PREFIX = "eventhandler.";
    private static final int MAX_LENGTH = 255;
    private static final boolean[] ALLOWED = new boolean[128];

    static {
        for (char c = 'a'; c <= 'z'; c++) {
            ALLOWED[c] = true;
            ALLOWED[Character.toUpperCase(c)] = true;
        }
        for (char c = '0'; c <= '9'; c++) {
            ALLOWED[c] = true;
        }
        for (char c : "._-:/".toCharArray()) {
            ALLOWED[c] = true;
        }
    }

    private EventTypeRule() {
    }

    /** Why {@code eventType} is not a valid event type, or {@code null} if it is. */
    public static String problem(String eventType) {
        if (eventType == null || eventType.isEmpty()) {
            return "eventType is required";
        }
        if (eventType.length() > MAX_LENGTH) {
            return "eventType is " + eventType.length() + " characters long; the limit is " + MAX_LENGTH;
        }
        for (int i = 0; i < eventType.length(); i++) {
            char c = eventType.charAt(i);
            if (c >= 128 || !ALLOWED[c]) {
                return "eventType may contain only letters, digits and . _ - : / (found "
                        + describe(c) + " at position " + (i + 1) + ")";
            }
        }
        return null;
    }

    /** Whether {@code eventType} is one of the broker's own, which a publisher may not use. */
    public static boolean reserved(String eventType) {
        return eventType.regionMatches(true, 0, RESERVED_PREFIX, 0, RESERVED_PREFIX.length());
    }

    private static String describe(char c) {
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
}
