package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A named table of results, the one source of the text on the terminal and of the JSON and CSV files.
 * A cell is a number, a string, or null for a value that could not be measured.
 *
 * @param rows each as long as {@code columns}
 */
record ResultTable(String name, List<String> columns, List<List<Object>> rows) {
    static final String MISSING = "n/a";
    /** Counts of what went wrong: summed, not averaged, over several runs. */
    static final Set<String> PROBLEM_COLUMNS = Set.of("lost", "duplicated", "out-of-order", "wrong-id", "refused");

    /** A cell as text: decimals exactly as rounded, {@value #MISSING} for null. */
    static String text(Object cell) {
        if (cell == null) {
            return MISSING;
        }
        return cell instanceof BigDecimal decimal ? decimal.toPlainString() : cell.toString();
    }

    /** {@code count} per second over {@code nanos}, to 1 decimal. */
    static BigDecimal perSecond(long count, long nanos) {
        return BigDecimal.valueOf(count * 1e9 / nanos).setScale(1, RoundingMode.HALF_UP);
    }

    /** A duration in seconds, to 3 decimals. */
    static BigDecimal seconds(long nanos) {
        return BigDecimal.valueOf(nanos / 1e9).setScale(3, RoundingMode.HALF_UP);
    }

    /**
     * The tables of several runs of one scenario, as one table each: per row (matched by position, the runs
     * having the same rows) the median of each number over the runs (the lower middle for an even count),
     * except the counts of what went wrong ({@link #PROBLEM_COLUMNS}), which are totals, so that a problem
     * in one run is never hidden by the others.
     */
    static List<ResultTable> medians(List<List<ResultTable>> runs) {
        List<ResultTable> first = runs.get(0);
        return IntStream.range(0, first.size()).mapToObj(t -> {
            ResultTable table = first.get(t);
            List<List<Object>> rows = IntStream.range(0, table.rows().size())
                    .mapToObj(r -> IntStream.range(0, table.columns().size())
                            .mapToObj(c -> combine(table.columns().get(c),
                                    runs.stream().map(run -> run.get(t).rows().get(r).get(c)).toList()))
                            .toList())
                    .toList();
            return new ResultTable(table.name() + "-median-of-" + runs.size(), table.columns(), rows);
        }).toList();
    }

    private static Object combine(String column, List<Object> cells) {
        if (!cells.stream().allMatch(Number.class::isInstance)) {
            return cells.get(0);
        }
        List<BigDecimal> numbers = cells.stream().map(cell -> cell instanceof BigDecimal decimal ? decimal
                : BigDecimal.valueOf(((Number) cell).longValue())).sorted().toList();
        if (PROBLEM_COLUMNS.contains(column)) {
            return numbers.stream().reduce(BigDecimal.ZERO, BigDecimal::add);
        }
        return numbers.get((numbers.size() - 1) / 2);
    }

    /** The table aligned in columns: columns of numbers to the right, the others to the left. */
    String render() {
        int[] widths = IntStream.range(0, columns.size())
                .map(column -> Math.max(columns.get(column).length(), rows.stream()
                        .mapToInt(row -> text(row.get(column)).length()).max().orElse(0)))
                .toArray();
        boolean[] numeric = new boolean[columns.size()];
        IntStream.range(0, numeric.length).forEach(column -> numeric[column] = rows.stream()
                .anyMatch(row -> row.get(column) instanceof Number));
        StringBuilder out = new StringBuilder(name).append('\n');
        appendLine(out, widths, numeric, columns.stream().map(Object.class::cast).toList());
        out.append(IntStream.of(widths).mapToObj("-"::repeat).collect(Collectors.joining("  "))).append('\n');
        rows.forEach(row -> appendLine(out, widths, numeric, row));
        return out.toString();
    }

    private static void appendLine(StringBuilder out, int[] widths, boolean[] numeric, List<Object> cells) {
        for (int column = 0; column < widths.length; column++) {
            String cell = text(cells.get(column));
            String pad = " ".repeat(widths[column] - cell.length());
            out.append(column == 0 ? "" : "  ").append(numeric[column] ? pad + cell : cell + pad);
        }
        out.append('\n');
    }
}
