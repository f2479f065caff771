package eu.arrowhead.eventhandler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultTableTest {

    private static ResultTable run(String p50, int lost) {
        return new ResultTable("A", List.of("row", "p50 ms", "lost"),
                List.of(Arrays.asList("A", new BigDecimal(p50), lost)));
    }

    @Test
    void mediansTakeTheMiddleRunAndSumWhatWentWrong() {
        List<ResultTable> medians = ResultTable.medians(List.of(List.of(run("0.300", 0)), List.of(run("0.100", 2)),
                List.of(run("0.200", 1))));
        ResultTable table = medians.get(0);
        assertEquals("A-median-of-3", table.name());
        assertEquals(List.of("A", new BigDecimal("0.200"), new BigDecimal("3")), table.rows().get(0));
    }

    @Test
    void aCellThatCouldNotBeMeasuredInSomeRunIsNotAveraged() {
        ResultTable missing = new ResultTable("A", List.of("row", "p50 ms", "lost"),
                List.of(Arrays.asList("A", null, 0)));
        List<Object> row = ResultTable.medians(List.of(List.of(missing), List.of(run("0.100", 0)))).get(0).rows()
                .get(0);
        assertEquals(null, row.get(1));
    }

    @Test
    void rendersNumbersRightAlignedAndMissingCellsAsNa() {
        ResultTable table = new ResultTable("T", List.of("row", "n"),
                List.of(Arrays.asList("a", 5), Arrays.asList("bb", null)));
        assertEquals("T\nrow    n\n---  ---\na      5\nbb   n/a\n", table.render());
    }
}
