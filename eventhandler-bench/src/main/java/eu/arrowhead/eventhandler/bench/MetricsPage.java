package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A server's {@code /metrics} (Prometheus text format) at one moment: each sample's value by its name with
 * its labels as printed, such as {@code jvm_memory_used_bytes{area="heap"}}.
 */
final class MetricsPage {
    private final Map<String, Double> samples;

    private MetricsPage(Map<String, Double> samples) {
        this.samples = samples;
    }

    /** The page, or null when the server does not answer it with a 200 within {@code timeout}. */
    static MetricsPage read(URI base, Duration timeout) {
        HttpProbe.Answer answer = HttpProbe.get(base.resolve("/metrics"), timeout);
        return answer.status() == 200 ? parse(answer.body()) : null;
    }

    static MetricsPage parse(String text) {
        Map<String, Double> samples = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int space = line.lastIndexOf(' ');
            if (line.isEmpty() || line.startsWith("#") || space < 0) {
                continue;
            }
            try {
                samples.put(line.substring(0, space).trim(), Double.parseDouble(line.substring(space + 1)));
            } catch (NumberFormatException e) {
                // a timestamp or exemplar after the value: not written by this server's library
            }
        }
        return new MetricsPage(samples);
    }

    /** The sample's value as a whole number, or null if the page has no such sample. */
    Long value(String sample) {
        Double value = samples.get(sample);
        return value == null ? null : value.longValue();
    }
}
