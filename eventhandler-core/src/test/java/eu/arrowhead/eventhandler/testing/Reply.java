package eu.arrowhead.eventhandler.testing;

import java.util.Map;

/**
 * A complete HTTP response as the tests see it.
 *
 * @param headers header names in lower case
 */
public record Reply(int statusCode, String body, Map<String, String> headers) {

    /** The header's value, or an empty string. */
    public String header(String name) {
        return headers.getOrDefault(name.toLowerCase(java.util.Locale.ROOT), "");
    }
}
