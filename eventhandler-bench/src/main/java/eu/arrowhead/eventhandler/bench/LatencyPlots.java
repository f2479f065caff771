package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.IChart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Two PNG plots of a table's rows, each row a series, for what the percentiles hide: the latencies'
 * distribution, as a histogram in logarithmic bins because latencies spread over decades with a long tail;
 * and their course over the run, which shows whether slow events come in bursts (a collection, a flush)
 * or evenly.
 */
final class LatencyPlots {
    private static final int WIDTH = 1200;
    private static final int HEIGHT = 700;
    private static final int BINS_PER_DECADE = 20;
    /** The lowest latency binned as itself: a nanosecond, below anything two threads can measure. */
    private static final double MIN_MILLIS = 1e-6;
    private static final double NANOS_PER_MILLI = 1e6;
    private static final double NANOS_PER_SECOND = 1e9;
    /** Points per series in the over-time plot; more are thinned evenly, keeping every event over the p99. */
    private static final int MAX_POINTS = 20_000;

    static {
        // The plots are drawn into images only: no display is needed, and none is opened where there is one.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private LatencyPlots() {
    }

    /**
     * Writes {@code PREFIX-histogram.png} and {@code PREFIX-over-time.png} of the table's
     * {@link PlottedRow}s into {@code directory} and returns their paths; none when no row has a latency.
     */
    static List<Path> write(Path directory, String prefix, ResultTable table) throws IOException {
        List<PlottedRow> rows = table.rows().stream().filter(PlottedRow.class::isInstance).map(PlottedRow.class::cast)
                .filter(row -> row.outcome().latencyNanos().length > 0).toList();
        if (rows.isEmpty()) {
            return List.of();
        }
        XYChart histogram = chart(table.name() + ": latency distribution",
                "latency ms (" + BINS_PER_DECADE + " bins per decade)", "share of the row's deliveries (%)");
        histogram.getStyler().setXAxisLogarithmic(true);
        XYChart overTime = chart(table.name() + ": latency over the run", "seconds since the row's first publish",
                "latency ms");
        overTime.getStyler().setYAxisLogarithmic(true).setMarkerSize(2);
        for (PlottedRow row : rows) {
            LatencyStats stats = LatencyStats.of(row.outcome().latencyNanos());
            String name = row.label() + " (p50 " + stats.p50() + ", p99 " + stats.p99() + " ms)";
            addHistogram(histogram, name, millis(row.outcome().latencyNanos()));
            addOverTime(overTime, name, row.outcome(), stats);
        }
        Path histogramFile = directory.resolve(prefix + "-histogram.png");
        save(histogram, histogramFile);
        Path overTimeFile = directory.resolve(prefix + "-over-time.png");
        save(overTime, overTimeFile);
        return List.of(histogramFile, overTimeFile);
    }

    /** A row's share of deliveries in bins of equal width on a logarithmic axis, drawn as steps. */
    private static void addHistogram(XYChart chart, String name, double[] millis) {
        int first = bin(Arrays.stream(millis).min().orElseThrow());
        int[] counts = new int[bin(Arrays.stream(millis).max().orElseThrow()) - first + 1];
        Arrays.stream(millis).forEach(value -> counts[bin(value) - first]++);
        // The outline of the bars: up at each bin's left edge, across, and down after the last.
        double[] x = new double[2 * counts.length + 2];
        double[] y = new double[x.length];
        for (int bin = 0; bin <= counts.length; bin++) {
            double edge = edge(first + bin);
            x[2 * bin] = edge;
            x[2 * bin + 1] = edge;
            y[2 * bin] = bin == 0 ? 0 : 100.0 * counts[bin - 1] / millis.length;
            y[2 * bin + 1] = bin == counts.length ? 0 : 100.0 * counts[bin] / millis.length;
        }
        chart.addSeries(name, x, y).setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line)
                .setMarker(SeriesMarkers.NONE);
    }

    /** Each delivery's latency at the time its event was sent, thinned to {@link #MAX_POINTS}. */
    private static void addOverTime(XYChart chart, String name, DeliveryLog.Outcome outcome, LatencyStats stats) {
        long[] latencies = outcome.latencyNanos();
        long[] sent = outcome.sentNanos();
        int step = Math.max(1, latencies.length / MAX_POINTS);
        double p99 = stats.p99().doubleValue() * NANOS_PER_MILLI;
        int[] kept = IntStream.range(0, latencies.length).filter(i -> i % step == 0 || latencies[i] >= p99)
                .toArray();
        double[] seconds = IntStream.of(kept).mapToDouble(i -> sent[i] / NANOS_PER_SECOND).toArray();
        double[] millis = IntStream.of(kept).mapToDouble(i -> latencies[i] / NANOS_PER_MILLI).toArray();
        chart.addSeries(name, seconds, millis).setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
    }

    private static XYChart chart(String title, String xTitle, String yTitle) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        return chart;
    }

    /** The logarithmic bin of a latency in ms: bin k spans [edge(k), edge(k + 1)). */
    private static int bin(double millis) {
        return (int) Math.floor(Math.log10(Math.max(millis, MIN_MILLIS)) * BINS_PER_DECADE);
    }

    private static double edge(int bin) {
        return Math.pow(10, (double) bin / BINS_PER_DECADE);
    }

    private static double[] millis(long[] nanos) {
        return Arrays.stream(nanos).mapToDouble(value -> value / NANOS_PER_MILLI).toArray();
    }

    private static void save(IChart chart, Path file) throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
