package eu.arrowhead.eventhandler.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
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
