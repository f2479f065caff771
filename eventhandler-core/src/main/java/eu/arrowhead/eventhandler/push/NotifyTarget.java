package eu.arrowhead.eventhandler.push;

import eu.arrowhead.eventhandler.protocol.RequestException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a push subscriber's events go, from the subscription's parts, each checked on its own: a host that is
 * a host name or an IP address and nothing else, a port, and a path. The URL is put together by
 * {@link URI}'s multi-argument constructor, never by joining text, so no part can reach into another: an
 * address {@code 127.0.0.1/x?} cannot turn the port into a query, {@code user@host} cannot smuggle userinfo,
 * and a notify URI cannot name another host.
 *
 * <p>The rules, each refused with a 400 that names it:
 * <ul>
 *   <li>{@code subscriberSystem.address}: a host name (labels of letters, digits and {@code -}, as RFC 1123),
 *       a dotted-quad IPv4 address, or an IPv6 address with or without brackets (4.x's Service Registry keeps
 *       them without). Never a port, path, query, fragment or userinfo. A last label that starts with a digit
 *       must make a dotted quad with no leading zeros: {@code 127.1}, {@code 0x7f.1} and {@code 0177.0.0.1}
 *       mean 127.0.0.1 to the C resolver and are refused rather than guessed at. An IPv6 zone
 *       ({@code fe80::1%eth0}) is refused: a scoped address is link-local.</li>
 *   <li>{@code notifyUri}: a path, as 4.x used it ({@code UriComponentsBuilder.path(notifyUri)}): {@code /notify}
 *       or {@code notify} (a {@code /} is put in front). RFC 3986 path characters only, no percent-escapes,
 *       no query or fragment, no {@code scheme://} and no {@code //} at its start, no {@code .} or {@code ..}
 *       segment.</li>
 * </ul>
 *
 * @param host    the host as the URL holds it: a name in lower case, or an IP address without brackets
 * @param literal the address when {@code host} is an IP address; empty for a name
 * @param port    from 1 to 65535
 * @param path    starting with {@code /}
 */
public record NotifyTarget(String host, Optional<InetAddress> literal, int port, String path) {
    private static final int MAX_HOST_LENGTH = 253;
    private static final int MAX_PATH_LENGTH = 2048;
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
    private static final Pattern DOTTED_QUAD =
            Pattern.compile("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+");
    private static final Pattern SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://.*", Pattern.DOTALL);
    private static final String IPV6_RULE = "with a ':' it must be an IPv6 address (with or without brackets) and"
            + " nothing else: no port, path, query or userinfo (the port is subscriberSystem.port)";
    /** RFC 3986 unreserved, sub-delims, ':' and '@': what a path segment holds besides escapes. */
    private static final String PATH_CHARACTERS = "-._~!$&'()*+,;=:@/";

    /**
     * Checks the parts.
     *
     * @throws RequestException 400 naming the rule a part breaks
     */
    public static NotifyTarget of(String address, int port, String notifyUri) {
        String text = address.strip();
        String host;
        Optional<InetAddress> literal;
        if (text.indexOf(':') >= 0 || text.startsWith("[")) {
            literal = Optional.of(ipv6(text, address));
            host = literal.get().getHostAddress();
        } else {
            host = text.toLowerCase(Locale.ROOT);
            literal = hostName(host, address);
            if (literal.isPresent()) {
                host = literal.get().getHostAddress();
            }
        }
        return new NotifyTarget(host, literal, port, path(notifyUri));
    }

    private static InetAddress ipv6(String text, String address) {
        String bare = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        if (bare.indexOf('%') >= 0) {
            throw refuseAddress(address, "an IPv6 zone (%...) is refused: a scoped address is link-local, never a"
                    + " subscriber's network address");
        }
        if (!IPV6.matcher(bare).matches()) {
            throw refuseAddress(address, IPV6_RULE);
        }
        try {
            // A literal with ':' is parsed, never looked up.
            return InetAddress.getByName(bare);
        } catch (UnknownHostException e) {
            throw refuseAddress(address, IPV6_RULE);
        }
    }

    /** A host name or a dotted quad; the address when it is the latter. */
    private static Optional<InetAddress> hostName(String host, String address) {
        if (host.isEmpty() || host.length() > MAX_HOST_LENGTH) {
            throw refuseAddress(address, "a host name is 1 to " + MAX_HOST_LENGTH + " characters");
        }
        String[] labels = host.split("\\.", -1);
        for (String label : labels) {
            if (!LABEL.matcher(label).matches()) {
                throw refuseAddress(address, "it must be a host name (labels of letters, digits and '-', 1 to 63"
                        + " characters, split by '.') or an IP address, and nothing else: no port, path, query,"
                        + " fragment or user@ (the port is subscriberSystem.port, the path is notifyUri)");
            }
        }
        if (Character.isDigit(labels[labels.length - 1].charAt(0))) {
            if (!DOTTED_QUAD.matcher(host).matches()) {
                throw refuseAddress(address, "a numeric address must be an IPv4 address of four decimal numbers"
                        + " with no leading zeros, such as 192.168.1.30");
            }
            for (String label : labels) {
                if (Integer.parseInt(label) > 255) {
                    // Checked before InetAddress sees it: it would look up what is not an address as a name.
                    throw refuseAddress(address, "each number of an IPv4 address is from 0 to 255");
                }
            }
            try {
                return Optional.of(InetAddress.getByName(host));
            } catch (UnknownHostException e) {
                throw refuseAddress(address, "it is not a valid IPv4 address");
            }
        }
        return Optional.empty();
    }

    private static String path(String notifyUri) {
        String path = notifyUri.strip();
        if (SCHEME.matcher(path).matches()) {
            throw refuseNotifyUri(notifyUri, "it is a path such as /notify, not a URL: the Event Handler POSTs to"
                    + " subscriberSystem.address and port");
        }
        if (!path.startsWith("/")) {
            path = "/" + path;
        }
        if (path.length() > MAX_PATH_LENGTH) {
            throw refuseNotifyUri(notifyUri, "it is at most " + MAX_PATH_LENGTH + " characters");
        }
        if (path.startsWith("//")) {
            throw refuseNotifyUri(notifyUri, "it may not start with //, which would name a host");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || PATH_CHARACTERS.indexOf(c) >= 0;
            if (!allowed) {
                throw refuseNotifyUri(notifyUri, "it is a path of letters, digits and " + PATH_CHARACTERS
                        + " only: no space, '%', '?' (query), '#' (fragment) or other character");
            }
        }
        for (String segment : path.split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) {
                throw refuseNotifyUri(notifyUri, "it may not have a '.' or '..' segment");
            }
        }
        return path;
    }

    /** The URL events are POSTed to. */
    public URI uri(boolean https) {
        try {
            URI uri = new URI(https ? "https" : "http", null, host, port, path, null, null);
            if (uri.getHost() == null) {
                throw new URISyntaxException(uri.toString(), "no host");
            }
            return uri;
        } catch (URISyntaxException e) {
            // Every part was checked; a name the URI class still refuses is refused here, not later.
            throw RequestException.badPayload("subscriberSystem.address, port and notifyUri do not make a valid"
                    + " URL: " + e.getMessage());
        }
    }

    private static RequestException refuseAddress(String address, String rule) {
        return RequestException.badPayload("subscriberSystem.address '" + address + "' is refused: " + rule);
    }

    private static RequestException refuseNotifyUri(String notifyUri, String rule) {
        return RequestException.badPayload("notifyUri '" + notifyUri + "' is refused: " + rule);
    }
}
