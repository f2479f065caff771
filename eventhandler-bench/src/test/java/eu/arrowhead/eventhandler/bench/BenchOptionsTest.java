package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {
    private static final Path OUT = Path.of("results");

    private static BenchOptions parse(String... args) {
        return BenchOptions.parse(args, OUT);
    }

    private static String refusal(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> parse(args)).getMessage();
    }

    @Test
    void allRunsEveryScenarioButTheStoreAndMemoryInOrder() {
        BenchOptions options = parse("all", "--runs=3");
        assertEquals(List.of(Scenario.A, Scenario.B, Scenario.C, Scenario.D, Scenario.F, Scenario.P, Scenario.T,
                Scenario.S), options.scenarios());
        assertEquals(3, options.runs());
        assertEquals(9000, options.counts().get(Scenario.B));
        assertEquals(2000, options.counts().get(Scenario.P));
        assertEquals(Duration.ofSeconds(10), options.warmUp());
    }

    @Test
    void smokeIsShortAandS() {
        BenchOptions options = parse("smoke");
        assertEquals(List.of(Scenario.A, Scenario.S), options.scenarios());
        assertEquals(1000, options.counts().get(Scenario.A));
        assertEquals(Duration.ofSeconds(5), options.warmUp());
    }

    @Test
    void cpuWarmsUpLongerAndSetsTheStoreModeItself() {
        BenchOptions options = parse("cpu");
        assertEquals(List.of(Scenario.CPU), options.scenarios());
        assertEquals(30_000, options.counts().get(Scenario.CPU));
        assertEquals(Duration.ofSeconds(20), options.warmUp());
        assertEquals(Duration.ofSeconds(3), parse("cpu", "--warm-up-seconds=3").warmUp());
        assertEquals("65536", parse("cpu", "--store.batch-events=65536").overrides().get("store.batch-events"));
        assertTrue(refusal("cpu", "--store.mode=sync").contains("sets [store.mode] itself"));
        assertTrue(refusal("cpu", "--target=http://127.0.0.1:8455").contains("starts a server of its own"));
    }

    @Test
    void securePushSendsTenThousandEventsAndSetsTheTlsKeysItself() {
        BenchOptions options = parse("secure-push", "--runs=3", "--push.connections-per-target=1");
        assertEquals(List.of(Scenario.SECURE_PUSH), options.scenarios());
        assertEquals(10_000, options.counts().get(Scenario.SECURE_PUSH));
        assertEquals("1", options.overrides().get("push.connections-per-target"));
        assertTrue(refusal("secure-push", "--server.ssl.enabled=false").contains("sets [server.ssl.enabled] itself"));
        assertTrue(refusal("secure-push", "--target=http://127.0.0.1:8455").contains("starts a server of its own"));
    }

    @Test
    void aListOfScenariosSharesTheCountAndOverrides() {
        BenchOptions options = parse("A,C", "--events=50", "--warm-up-seconds=0", "--store.mode=off");
        assertEquals(List.of(Scenario.A, Scenario.C), options.scenarios());
        assertEquals(50, options.counts().get(Scenario.C));
        assertEquals(Duration.ZERO, options.warmUp());
        assertEquals("off", options.overrides().get("store.mode"));
    }

    @Test
    void badCommandLinesSayWhatIsWrong() {
        assertTrue(refusal("X").contains("unknown scenario 'X'"));
        assertTrue(refusal("A", "--events=0").contains("--events takes a whole number from 1"));
        assertTrue(refusal("A", "--runs=two").contains("--runs"));
        assertTrue(refusal("A", "events=3").contains("not of the form --key=value"));
        assertTrue(refusal("A", "--pid=5").contains("--pid goes with --target"));
        assertTrue(refusal("D", "--target=http://127.0.0.1:8455").contains("starts a server of its own"));
        assertTrue(refusal("D", "--server.worker-threads=3").contains("sets [server.worker-threads] itself"));
        assertTrue(refusal("S", "--subscriber.write-mode=queued").contains("itself"));
        assertTrue(refusal("A", "--mysql-url=jdbc:mysql://x/y").contains("go with the store scenario"));
        assertTrue(refusal("A", "--target=ftp://x:1").contains("--target takes http://host:port"));
        assertTrue(refusal("A", "--target=http://127.0.0.1:1", "--store.mode=off").contains("in-process"));
        assertTrue(refusal("--events=3").contains("name a scenario first"));
    }
}
