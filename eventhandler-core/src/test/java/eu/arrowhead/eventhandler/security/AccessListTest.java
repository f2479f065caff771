package eu.arrowhead.eventhandler.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import eu.arrowhead.eventhandler.config.ConfigException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ACL file's format: rules, wildcards, comments, and errors that name the line. */
class AccessListTest {

    private static AccessList parse(String... lines) {
        return AccessList.parse(List.of(lines), "acl");
    }

    @Test
    void allowsOnlyWhatARuleNames() {
        AccessList acl = parse("publish sensor-1 Temperature pressure", "subscribe dashboard temperature");
        assertTrue(acl.mayPublish("sensor-1", "temperature"));
        assertTrue(acl.mayPublish("sensor-1", "pressure"));
        assertFalse(acl.mayPublish("sensor-1", "humidity"));
        assertFalse(acl.mayPublish("dashboard", "temperature"), "subscribe rules do not allow publishing");
        assertTrue(acl.maySubscribe("dashboard", "temperature"));
        assertFalse(acl.maySubscribe("sensor-1", "temperature"));
    }

    @Test
    void aStarStandsForAnySystemOrAnyType() {
        AccessList acl = parse("publish * public", "subscribe monitor *", "SUBSCRIBE * alarms");
        assertTrue(acl.mayPublish("anyone", "public"));
        assertFalse(acl.mayPublish("anyone", "private"));
        assertTrue(acl.maySubscribe("monitor", "whatever"));
        assertTrue(acl.maySubscribe("anyone", "alarms"));
        assertFalse(acl.maySubscribe("anyone", "private"));
    }

    @Test
    void systemNamesAreCaseInsensitive() {
        assertTrue(parse("publish Sensor-1 t").mayPublish("sensor-1", "t"));
    }

    @Test
    void commentsAndBlankLinesAreIgnored() {
        AccessList acl = parse("# the plant's rules", "", "   ", "publish a t # but not u");
        assertTrue(acl.mayPublish("a", "t"));
        assertFalse(acl.mayPublish("a", "u"));
        assertFalse(acl.mayPublish("a", "#"));
    }

    @Test
    void anEmptyAclAllowsNothing() {
        assertFalse(parse("# nothing yet").mayPublish("a", "t"));
    }

    @Test
    void errorsNameTheLine() {
        assertEquals("acl line 2: a rule starts with publish or subscribe, not 'publsh'",
                assertThrows(ConfigException.class, () -> parse("publish a t", "publsh a t")).getMessage());
        assertEquals("acl line 1: a rule is 'subscribe SYSTEM EVENT_TYPE...' (* for any system or event type)",
                assertThrows(ConfigException.class, () -> parse("subscribe a")).getMessage());
        assertTrue(assertThrows(ConfigException.class, () -> parse("", "publish a bad|type")).getMessage()
                .startsWith("acl line 2: eventType"));
    }

    @Test
    void aMissingFileIsAConfigurationError() {
        ConfigException e = assertThrows(ConfigException.class, () -> AccessList.read(Path.of("no/such/acl")));
        assertEquals("security.acl-file: the ACL file no/such/acl does not exist", e.getMessage());
    }

    @Test
    void theExampleFileParses() {
        AccessList acl = AccessList.read(Path.of("../config/acl.example"));
        assertTrue(acl.mayPublish("temperature-sensor", "temperature"));
    }
}
