package eu.arrowhead.eventhandler.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import eu.arrowhead.eventhandler.config.ConfigLoader;
import eu.arrowhead.eventhandler.testing.SampleEvents;
import eu.arrowhead.eventhandler.topic.PublishKey;
import java.lang.ref.SoftReference;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * H2 keeps every string bound to a statement in a cache shared by the JVM, of any length and on no heap share:
 * with 60 KB events at 25/s and {@code -Xmx64m}, GC took 82% of the time (issue 29). The store turns that cache
 * off before H2 first reads its settings; checked in a JVM of its own, since H2 reads them once per JVM and another
 * test may have used H2 before the store here.
 */
class H2SharedCacheTest {
    private static final int EVENT_CHARS = 60_000;

    @Test
    void anEventWrittenByTheStoreIsNotKeptInH2sSharedStringCache() throws Exception {
        Process probe = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), H2SharedCacheTest.class.getName())
                .redirectErrorStream(true).start();
        if (!probe.waitFor(120, TimeUnit.SECONDS)) {
            probe.destroyForcibly();
        }
        String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        List<String> lines = output.lines().toList();
        assertEquals("event strings in H2's cache: 0", lines.isEmpty() ? output : lines.get(lines.size() - 1), output);
    }

    /** The probe: opens the store on a new H2 file, writes one large event, and counts such strings in H2's cache. */
    public static void main(String[] args) throws Exception {
        try (H2Database h2 = new H2Database()) {
            EventDatabase database = EventDatabase.open(ConfigLoader.withOverrides(h2.settings()));
            try {
                database.write(List.of(new WriteBuffer.Entry(1, List.of(SampleEvents.incoming("cached",
                        "x".repeat(EVENT_CHARS))), PublishKey.NONE, 0, 0, null, null)), List.of());
            } finally {
                database.close();
            }
        }
        Field field = Class.forName("org.h2.util.StringUtils").getDeclaredField("softCache");
        field.setAccessible(true);
        SoftReference<?> cache = (SoftReference<?>) field.get(null);
        String[] strings = cache == null ? new String[0] : (String[]) Objects.requireNonNullElse(cache.get(), new String[0]);
        long large = Arrays.stream(strings).filter(s -> s != null && s.length() >= EVENT_CHARS).count();
        System.out.println("event strings in H2's cache: " + large);
    }
}
