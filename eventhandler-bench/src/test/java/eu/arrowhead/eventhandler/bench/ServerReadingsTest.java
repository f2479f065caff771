package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** What the bench reads off a server process: its heap from jcmd, its metrics from /metrics. */
class ServerReadingsTest {

    @Test
    void theHeapInUseIsTheSumOfTheGenerationsNotMetaspace() {
        String serial = """
                12345:
                 def new generation   total 19648K, used 337K [0x00000000fc000000, 0x00000000fd550000)
                  eden space 17472K,   1% used [0x00000000fc000000, 0x00000000fc054000, 0x00000000fd110000)
                 tenured generation   total 43712K, used 2243K [0x00000000fd550000, 0x0000000100000000)
                   the space 43712K,   5% used [0x00000000fd550000, 0x00000000fd780e68, 0x0000000100000000)
                 Metaspace       used 8946K, committed 9088K, reserved 1114112K
                  class space    used 1062K, committed 1152K, reserved 1048576K
                """;
        assertEquals((337L + 2243L) * 1024, RemoteTarget.heapUsed(serial));
        assertEquals(5120L * 1024, RemoteTarget.heapUsed(
                " garbage-first heap   total 262144K, used 5120K [0x0000000700000000, 0x0000000800000000)\n"
                        + "  region size 1024K, 6 young (6144K), 0 survivors (0K)\n"));
        assertNull(RemoteTarget.heapUsed("12345:\nCould not attach"));
    }

    @Test
    void metricsAreReadByNameWithLabels() {
        MetricsPage page = MetricsPage.parse("""
                # HELP eventhandler_store_dropped_events_total Events dropped
                # TYPE eventhandler_store_dropped_events_total counter
                eventhandler_store_dropped_events_total 85000.0
                jvm_memory_used_bytes{area="heap"} 2.1348352E7
                eventhandler_subscribers 3
                """);
        assertEquals(85_000L, page.value("eventhandler_store_dropped_events_total"));
        assertEquals(21_348_352L, page.value("jvm_memory_used_bytes{area=\"heap\"}"));
        assertEquals(3L, page.value("eventhandler_subscribers"));
        assertNull(page.value("eventhandler_topics"));
    }
}
