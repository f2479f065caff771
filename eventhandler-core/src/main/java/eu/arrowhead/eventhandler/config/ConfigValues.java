package eu.arrowhead.eventhandler.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Reads typed values out of the raw map; every failure names the key and the value. */
final class ConfigValues {
    private static final int CORES = Runtime.getRuntime().availableProcessors();

    private final Map<String, String> raw;
    private final Set<String> read = new HashSet<>();

    ConfigValues(Map<String, String> raw) {
        this.raw = raw;
    }

    String text(String key) {
        read.add(key);
        String value = raw.get(key);
        if (value == null) {
            throw new IllegalStateException("no default for " + key + " in eventhandler.properties");
        }
        return value;
    }

    String host(String key) {
        String value = text(key);
        if (value.isEmpty() || value.chars().anyMatch(Character::isWhitespace)) {
            throw invalid(key, value, "a host name or IP address");
        }
        return value;
    }

    EventHandlerConfig.StoreMode storeMode(String key) {
        String value = text(key);
        for (EventHandlerConfig.StoreMode mode : EventHandlerConfig.StoreMode.values()) {
            if (mode.name().equalsIgnoreCase(value)) {
                return mode;
            }
        }
        throw invalid(key, value, "one of async, sync, off");
    }

    EventHandlerConfig.WriteMode writeMode(String key) {
        String value = text(key);
        for (EventHandlerConfig.WriteMode mode : EventHandlerConfig.WriteMode.values()) {
            if (mode.label().equalsIgnoreCase(value)) {
                return mode;
            }
        }
        throw invalid(key, value, "one of queued, publisher-thread");
    }

    String jdbcUrl(String key) {
        String value = text(key);
        if (!value.startsWith("jdbc:h2:") && !value.startsWith("jdbc:mysql:")) {
            throw invalid(key, value, "a JDBC URL starting with jdbc:h2: or jdbc:mysql:"
                    + " (MariaDB too is reached with jdbc:mysql:)");
        }
        return value;
    }

    long longInteger(String key, long min, long max) {
        String value = text(key);
        long parsed;
        try {
            parsed = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw invalid(key, value, "a whole number from " + min + " to " + max);
        }
        if (parsed < min || parsed > max) {
            throw invalid(key, value, "a whole number from " + min + " to " + max);
        }
        return parsed;
    }

    int integer(String key, int min, int max) {
        return (int) longInteger(key, min, max);
    }

    int threads(String key) {
        int value = integer(key, 0, 10_000);
        return value == 0 ? CORES : value;
    }

    Duration seconds(String key, int min) {
        return Duration.ofSeconds(longInteger(key, min, 31_536_000));
    }

    Duration millis(String key, long min, long max) {
        return Duration.ofMillis(longInteger(key, min, max));
    }

    /**
     * A number of bytes the heap must hold: 0 takes {@code derived}, the part's share of the heap
     * ({@link HeapBudget}); more than {@link HeapBudget#mostForOnePart()} cannot hold and stops the start.
     */
    long heapBytes(String key, long derived, HeapBudget heap) {
        long value = longInteger(key, 0, Long.MAX_VALUE);
        if (value == 0) {
            return derived;
        }
        if (value > heap.mostForOnePart()) {
            throw new ConfigException("configuration key '" + key + "' has the value '" + value + "'; that is more"
                    + " than all the parts clients make grow may take together, " + heap.allPartsSaid()
                    + ", which the heap could not hold with everything else: lower it, or 0 for its share of the heap ("
                    + derived + " bytes), or give the JVM more heap");
        }
        return value;
    }

    /**
     * A number of things, each charged {@code bytesEach}, that a share of the heap must hold: 0 takes what the
     * share holds (at least 1); more stops the start.
     *
     * @param share how the share is said in the message, such as "the topics' 1/19"
     * @param hint  what else the operator may lower, or an empty string
     */
    int countWithinShare(String key, int most, long shareBytes, long bytesEach, String share, String hint,
                         HeapBudget heap) {
        long fits = Math.min(most, shareBytes / bytesEach);
        int count = integer(key, 0, most);
        if (count == 0) {
            return (int) Math.max(1, fits);
        }
        if (count > fits) {
            throw new ConfigException("configuration key '" + key + "' (" + count + ") cannot hold within the heap:"
                    + " at " + bytesEach + " bytes each, " + share + " of the "
                    + heap.allPartsSaid() + " holds " + fits + "; lower it" + hint + ", set it to 0 to"
                    + " derive it from the heap, or raise -Xmx");
        }
        return count;
    }

    boolean bool(String key) {
        String value = text(key);
        if (value.equalsIgnoreCase("true")) {
            return true;
        }
        if (value.equalsIgnoreCase("false")) {
            return false;
        }
        throw invalid(key, value, "true or false");
    }

    /**
     * A comma-separated list of web origins ({@code scheme://host[:port]}, as a browser sends them in
     * {@code Origin}) or {@code *}; empty for none.
     */
    List<String> origins(String key) {
        List<String> origins = new ArrayList<>();
        for (String origin : text(key).split(",")) {
            String trimmed = origin.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            if (!trimmed.equals("*") && !trimmed.matches("[A-Za-z][A-Za-z0-9+.-]*://[^/?#\\s]+")) {
                throw invalid(key, text(key), "a comma-separated list of origins such as https://plant.example:8080"
                        + " (scheme, host and port only, no path), or *; '" + trimmed + "' is not one");
            }
            origins.add(trimmed);
        }
        return List.copyOf(origins);
    }

    /** A comma-separated list of CIDR blocks ({@link AddressRange}); empty for none. */
    List<AddressRange> addressRanges(String key) {
        List<AddressRange> ranges = new ArrayList<>();
        for (String item : text(key).split(",")) {
            if (item.isBlank()) {
                continue;
            }
            try {
                ranges.add(AddressRange.parse(item));
            } catch (IllegalArgumentException e) {
                throw invalid(key, text(key), "a comma-separated list of CIDR blocks such as 169.254.0.0/16,fe80::/10"
                        + " (IP addresses, not host names); " + e.getMessage());
            }
        }
        return List.copyOf(ranges);
    }

    /** An http or https URI without a trailing slash. */
    URI httpUri(String key) {
        String value = text(key);
        try {
            URI uri = new URI(value.endsWith("/") ? value.substring(0, value.length() - 1) : value);
            if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // reported below, with the key
        }
        throw invalid(key, value, "an http:// or https:// URL with a host");
    }

    void requireAllRead() {
        Set<String> unread = new HashSet<>(raw.keySet());
        unread.removeAll(read);
        if (!unread.isEmpty()) {
            throw new IllegalStateException("keys documented but not used: " + unread);
        }
    }

    private static ConfigException invalid(String key, String value, String expected) {
        return new ConfigException("configuration key '" + key + "' has the value '" + value
                + "'; it must be " + expected);
    }
}
