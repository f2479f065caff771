package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReliabilityOptionsTest {
    private static final Path OUT = Path.of("results");

    private static ReliabilityOptions parse(String... args) {
        return ReliabilityOptions.parse(args, OUT);
    }

    private static String refusal(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> parse(args)).getMessage();
    }

    @Test
    void allRunsEveryModeInOrderWithEachModesDefaults() {
        ReliabilityOptions options = parse("all");
        assertEquals(List.of(ReliabilityMode.FLOOD, ReliabilityMode.STREAMS, ReliabilityMode.BODIES,
                ReliabilityMode.CRASH, ReliabilityMode.SOAK), options.modes());
        assertEquals(30, options.secondsOr(30));
        assertEquals(120, options.secondsOr(120));
        assertEquals("64m", options.heapOr("64m"));
        assertNull(options.heapOr(null));
        assertEquals(5, options.kills());
        assertEquals(60, options.minutes());
        assertEquals(16, options.workerThreads());
        assertNull(options.mysqlUrl());
        assertEquals(OUT, options.out());
    }

    @Test
    void optionsOverrideTheDefaultsAndDottedKeysConfigureTheServers() {
        ReliabilityOptions options = parse("flood,crash", "--seconds=15", "--kills=2", "--heap=128m",
                "--mysql-url=jdbc:mysql://127.0.0.1:3306/reliability", "--server.worker-threads=8");
        assertEquals(List.of(ReliabilityMode.FLOOD, ReliabilityMode.CRASH), options.modes());
        assertEquals(15, options.secondsOr(30));
        assertEquals(2, options.kills());
        assertEquals("128m", options.heapOr("64m"));
        assertEquals("root", options.mysqlUser());
        assertEquals(Map.of("store.mode", "async", "server.worker-threads", "8"),
                options.settings(Map.of("store.mode", "async")));
    }

    @Test
    void badCommandLinesSayWhatIsWrong() {
        assertTrue(refusal().contains("name a mode first"));
        assertTrue(refusal("flod").contains("unknown mode 'flod'"));
        assertTrue(refusal("flood", "--secs=3").contains("unknown option --secs"));
        assertTrue(refusal("flood", "--seconds=0").contains("--seconds takes a whole number from 1"));
        assertTrue(refusal("flood", "--heap=lots").contains("--heap"));
        assertTrue(refusal("flood", "--mysql-url=jdbc:mysql://x/y").contains("go with the crash mode"));
        assertTrue(refusal("crash", "--mysql-url=jdbc:h2:mem:x").contains("jdbc:mysql://"));
        assertTrue(refusal("crash", "--mysql-url=jdbc:mysql://db.example.com:3306/x").contains("on this machine"));
        assertTrue(refusal("crash", "--store.mode=sync").contains("crash sets [store.mode] itself"));
    }
}
