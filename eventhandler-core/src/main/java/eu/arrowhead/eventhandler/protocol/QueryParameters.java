package eu.arrowhead.eventhandler.protocol;

import jakarta.ws.rs.core.MultivaluedMap;
import java.util.List;

/** Reading query parameters by the API's rules: each at most once, numbers in range, or a 400 that says so. */
public final class QueryParameters {
    private QueryParameters() {
    }

    /**
     * The parameter's one value, or {@code null} when it is absent.
     *
     * @throws RequestException 400 if it is given more than once
     */
    public static String single(MultivaluedMap<String, String> query, String name) {
        List<String> values = query.get(name);
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw RequestException.invalidParameter(name + " is given " + values.size() + " times; give it once");
        }
        return values.get(0);
    }

    /**
     * A parameter's value as a whole number from {@code min} to {@code max}.
     *
     * @param bound where the bounds come from, for the message (a configuration key), or empty
     * @throws RequestException 400 naming the parameter and its range otherwise
     */
    public static long number(String value, String name, long min, long max, String bound) {
        try {
            long number = Long.parseLong(value);
            if (number >= min && number <= max) {
                return number;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw RequestException.invalidParameter(name + " must be a whole number from " + min + " to " + max
                + (bound.isEmpty() ? "" : " (" + bound + ")") + ", not '" + value + "'");
    }
}
