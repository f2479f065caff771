package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class SecurePushCriterionTest {

    /** A table of the scenario's columns with only the cells the criterion reads filled in. */
    private static ResultTable figures(String secureP99, long secureOpen, long insecureLost) {
        List<String> columns = List.of("row", "lost", "duplicated", "out-of-order", "p99 ms",
                "open at end, most to 1 subscriber");
        return new ResultTable("secure-push", columns, List.of(
                row(SecurePushScenario.SECURE, 0, new BigDecimal(secureP99), secureOpen),
                row(SecurePushScenario.INSECURE, insecureLost, new BigDecimal("5.0"), 1)));
    }

    private static List<Object> row(String mode, long lost, BigDecimal p99, long open) {
        List<Object> row = new ArrayList<>(Collections.nCopies(6, null));
        row.set(0, mode);
        row.set(1, lost);
        row.set(2, 0L);
        row.set(3, 0L);
        row.set(4, p99);
        row.set(5, open);
        return row;
    }

    private static List<Object> verdicts(ResultTable criterion) {
        return criterion.rows().stream().map(row -> row.get(3)).toList();
    }

    @Test
    void holdsAtTwiceTheInsecureP99AndTwoConnections() {
        assertEquals(List.of("held", "held", "held"), verdicts(SecurePushScenario.criterion(figures("10.0", 2, 0))));
    }

    @Test
    void eachPartIsMissedOnItsOwn() {
        assertEquals(List.of("held", "held", "missed"), verdicts(SecurePushScenario.criterion(figures("10.1", 2, 0))));
        assertEquals(List.of("held", "missed", "held"), verdicts(SecurePushScenario.criterion(figures("6.0", 3, 0))));
        assertEquals(List.of("missed", "held", "held"), verdicts(SecurePushScenario.criterion(figures("6.0", 1, 1))));
    }
}
