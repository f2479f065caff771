package eu.arrowhead.eventhandler.http;

import eu.arrowhead.eventhandler.api.ExceptionType;
import eu.arrowhead.eventhandler.protocol.RequestException;
import java.util.Iterator;
import java.util.Locale;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;

/**
 * The HTTP rules a request must meet before any handler sees it (RFC 9110, 9112 and 3986), checked on the
 * raw request: Grizzly passes on what it does not understand, and Jersey, which builds a
 * {@link java.net.URI} of the request target and the {@code Host} header, then fails with a 500.
 *
 * <ul>
 *   <li>The path holds only the characters a URI path may hold, and every {@code %} starts an escape of two
 *       hex digits; so does the query, which may hold no control characters, spaces, {@code "}, {@code <} or
 *       {@code >} either.</li>
 *   <li>There is exactly one {@code Host}, a host name or IP address with an optional port (RFC 9112 3.2
 *       asks for 400 otherwise).</li>
 *   <li>A body is not compressed: the server decodes no content coding, and would otherwise read a gzip
 *       body as JSON or ignore the header (415, with {@code Accept-Encoding: identity}, RFC 9110 15.5.16).</li>
 * </ul>
 *
 * <p>How a body is framed is checked earlier, in the codec ({@link StrictHttpCodec}).
 */
public final class RequestSyntax {
    /** RFC 3986 unreserved and sub-delims: what a path segment and a host name hold besides escapes. */
    private static final String NAME_CHARACTERS = "-._~!$&'()*+,;=";

    private RequestSyntax() {
    }

    /**
     * @throws RequestException 400 for a request that breaks the rules above, 415 for a compressed body
     *                          (then with {@code Accept-Encoding} set on {@code response})
     */
    public static void check(Request request, Response response) {
        checkPath(request.getRequestURI());
        checkQuery(request.getQueryString());
        checkHost(request);
        checkContentCoding(request, response);
    }

    private static void checkPath(String path) {
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == '%') {
                requireEscape(path, i, "path");
            } else if (!isNameCharacter(c) && c != '/' && c != ':' && c != '@') {
                throw RequestException.invalidParameter("the request path has the character " + describe(c)
                        + ", which a URI path may hold only percent-encoded");
            }
        }
    }

    /**
     * Lenient where Jersey is: characters such as {@code |} or {@code [} that clients leave unencoded, and
     * UTF-8 text, get through as they always did; only what no URI may hold is refused.
     */
    private static void checkQuery(String query) {
        if (query == null) {
            return;
        }
        for (int i = 0; i < query.length(); i++) {
            char c = query.charAt(i);
            if (c == '%') {
                requireEscape(query, i, "query");
            } else if (c == '"' || c == '<' || c == '>' || Character.isISOControl(c) || Character.isSpaceChar(c)) {
                throw RequestException.invalidParameter("the query has the character " + describe(c)
                        + ", which a URI may hold only percent-encoded");
            }
        }
    }

    private static void requireEscape(String text, int at, String part) {
        if (!isEscapeAt(text, at)) {
            String escape = text.substring(at, Math.min(text.length(), at + 3));
            throw RequestException.invalidParameter("the request " + part + " has '" + escape
                    + "', which is not a percent-encoded byte (% and two hex digits); send % itself as %25");
        }
    }

    private static void checkHost(Request request) {
        Iterator<String> hosts = request.getHeaders("Host").iterator();
        if (!hosts.hasNext()) {
            return; // HTTP/1.0; Grizzly itself refuses an HTTP/1.1 request without one
        }
        String host = hosts.next();
        if (hosts.hasNext()) {
            throw RequestException.invalidParameter("the request has more than one Host header");
        }
        if (!isHost(host)) {
            throw RequestException.invalidParameter("the Host header '" + host + "' is not a host name or IP"
                    + " address with an optional port");
        }
    }

    /** RFC 3986 {@code host [ ":" port ]}, with a reg-name of at least one character and a port up to 65535. */
    private static boolean isHost(String value) {
        int portColon;
        if (value.startsWith("[")) {
            int close = value.indexOf(']');
            if (close < 2 || !value.substring(1, close).chars().allMatch(c -> isHex(c) || c == ':' || c == '.')) {
                return false;
            }
            portColon = close + 1;
            if (portColon < value.length() && value.charAt(portColon) != ':') {
                return false;
            }
        } else {
            portColon = value.indexOf(':');
            String name = portColon < 0 ? value : value.substring(0, portColon);
            if (name.isEmpty()) {
                return false;
            }
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (c == '%' ? !isEscapeAt(name, i) : !isNameCharacter(c)) {
                    return false;
                }
            }
        }
        if (portColon < 0 || portColon >= value.length()) {
            return true;
        }
        String port = value.substring(portColon + 1);
        return port.length() <= 5 && port.chars().allMatch(c -> c >= '0' && c <= '9')
                && (port.isEmpty() || Integer.parseInt(port) <= 65_535);
    }

    private static boolean isEscapeAt(String text, int at) {
        return at + 2 < text.length() && isHex(text.charAt(at + 1)) && isHex(text.charAt(at + 2));
    }

    private static boolean isHex(int c) {
        return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
    }

    private static void checkContentCoding(Request request, Response response) {
        String coding = request.getHeader("Content-Encoding");
        boolean hasBody = request.getContentLength() > 0 || request.getRequest().isChunked();
        if (hasBody && coding != null && !coding.isBlank() && !coding.trim().equalsIgnoreCase("identity")) {
            response.setHeader("Accept-Encoding", "identity");
            throw new RequestException(415, ExceptionType.BAD_PAYLOAD, "the request body is encoded with '"
                    + coding.trim().toLowerCase(Locale.ROOT) + "'; the Event Handler takes bodies uncompressed only");
        }
    }

    private static boolean isNameCharacter(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                || NAME_CHARACTERS.indexOf(c) >= 0;
    }

    private static String describe(char c) {
        return c >= 0x21 && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
    }
}
