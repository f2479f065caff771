package eu.arrowhead.eventhandler.bench;

import eu.arrowhead.eventhandler.protocol.JsonMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Writes a run's tables into a directory: {@code SCENARIO-TIME.json} with every table, one
 * {@code SCENARIO-TIME-TABLE.csv} per table, and for each table with latencies its {@link LatencyPlots},
 * {@code SCENARIO-TIME-TABLE-histogram.png} and {@code SCENARIO-TIME-TABLE-over-time.png}. The time in the
 * names keeps earlier runs for comparison.
 */
final class ResultWriter {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")
            .withZone(ZoneOffset.UTC);

    private ResultWriter() {
    }

    /** The start of the names of a run's files: {@code SCENARIO-TIME}. */
    static String prefix(String scenario, Instant when) {
        return scenario + "-" + STAMP.format(when);
    }

    /**
     * The file in the result directory {@code out} that takes the output of a server process of a run whose
     * files start with {@code prefix}: {@code PREFIX-server-NAME.log}; the directory is made if need be.
     */
    static Path serverLog(Path out, String prefix, String name) {
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new BenchException("cannot create the result directory " + out + ": " + e, e);
        }
        return out.resolve(prefix + "-server-" + name + ".log");
    }

    /** Writes the files and returns their paths. */
    static List<Path> write(Path directory, String scenario, Instant when, List<ResultTable> tables) {
        String prefix = prefix(scenario, when);
        List<Path> written = new ArrayList<>();
        try {
            Files.createDirectories(directory);
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("scenario", scenario);
            document.put("time", when.toString());
            Map<String, Object> byName = new LinkedHashMap<>();
            tables.forEach(table -> byName.put(table.name(), records(table)));
            document.put("tables", byName);
            Path json = directory.resolve(prefix + ".json");
            JsonMapper.get().writerWithDefaultPrettyPrinter().writeValue(json.toFile(), document);
            written.add(json);
            for (ResultTable table : tables) {
                Path csv = directory.resolve(prefix + "-" + table.name() + ".csv");
                Files.writeString(csv, csv(table), StandardCharsets.UTF_8);
                written.add(csv);
            }
            for (ResultTable table : tables) {
                written.addAll(LatencyPlots.write(directory, prefix + "-" + table.name(), table));
            }
        } catch (IOException e) {
            throw new BenchException("cannot write the results into " + directory + ": " + e, e);
        }
        return written;
    }

    /** The rows as JSON objects, keyed by column; a value that could not be measured is null. */
    private static List<Map<String, Object>> records(ResultTable table) {
        List<Map<String, Object>> records = new ArrayList<>();
        for (List<Object> row : table.rows()) {
            Map<String, Object> record = new LinkedHashMap<>();
            for (int column = 0; column < row.size(); column++) {
                record.put(table.columns().get(column), row.get(column));
            }
            records.add(record);
        }
        return records;
    }

    private static String csv(ResultTable table) {
        StringBuilder out = new StringBuilder();
        out.append(table.columns().stream().map(ResultWriter::csvField).collect(Collectors.joining(",")))
                .append('\n');
        for (List<Object> row : table.rows()) {
            out.append(row.stream().map(cell -> csvField(cell == null ? "" : ResultTable.text(cell)))
                    .collect(Collectors.joining(","))).append('\n');
        }
        return out.toString();
    }

    private static String csvField(String field) {
        boolean quote = field.contains(",") || field.contains("\"") || field.contains("\n");
        return quote ? '"' + field.replace("\"", "\"\"") + '"' : field;
    }
}
