package eu.arrowhead.eventhandler.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.IChart;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Two PNG plots of a row's event latencies, for what the table's percentiles hide: their distribution, as a
 * histogram in logarithmic bins because latencies spread over decades with a long tail; and their course
 * over the run, which shows whether slow events come in bursts (a collection, a flush) or evenly.
 */
final class LatencyPlots {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 600;
    private static final int BINS_PER_DECADE = 20;
    /** The lowest latency binned as itself: a nanosecond, below anything two threads can measure. */
    private static final double MIN_MILLIS = 1e-6;
    private static final double NANOS_PER_MILLI = 1e6;
    private static final double NANOS_PER_SECOND = 1e9;

    static {
        // The plots are drawn into images only: no display is needed, and none is opened where there is one.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private LatencyPlots() {
    }

    /**
     * Writes {@code PREFIX-histogram.png} and {@code PREFIX-over-time.png} into {@code directory} and returns
     * their paths; none when no event arrived, which leaves nothing to plot.
     */
    static List<Path> write(Path directory, String prefix, String label, DeliveryLog.Outcome outcome)
            throws IOException {
        long[] latencies = outcome.latencyNanos();
        if (latencies.length == 0) {
            return List.of();
        }
        LatencyStats stats = LatencyStats.of(latencies);
        String title = label + ": " + latencies.length + " events, p50 " + stats.p50() + " ms, p99 " + stats.p99()
                + " ms";
        Path histogram = directory.resolve(prefix + "-histogram.png");
        save(histogram(title, millis(latencies), stats), histogram);
        Path overTime = directory.resolve(prefix + "-over-time.png");
        save(overTime(title, outcome.sentNanos(), millis(latencies)), overTime);
        return List.of(histogram, overTime);
    }

    /** Event counts in bins of equal width on a logarithmic axis, drawn as steps, with p50 and p99 marked. */
    private static XYChart histogram(String title, double[] millis, LatencyStats stats) {
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
            y[2 * bin] = bin == 0 ? 0 : counts[bin - 1];
            y[2 * bin + 1] = bin == counts.length ? 0 : counts[bin];
        }
        XYChart chart = chart(title, "latency ms (" + BINS_PER_DECADE + " bins per decade)", "events");
        chart.getStyler().setXAxisLogarithmic(true).setLegendVisible(true);
        chart.addSeries("events", x, y).setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Area)
                .setMarker(SeriesMarkers.NONE);
        double top = Arrays.stream(counts).max().orElseThrow();
        mark(chart, "p50 " + stats.p50() + " ms", stats.p50().doubleValue(), top);
        mark(chart, "p99 " + stats.p99() + " ms", stats.p99().doubleValue(), top);
        return chart;
    }

    private static void mark(XYChart chart, String name, double at, double top) {
        chart.addSeries(name, new double[] {at, at}, new double[] {0, top})
                .setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line).setMarker(SeriesMarkers.NONE);
    }

    /** Each event's latency at the time it was sent, on a logarithmic axis so that the tail shows. */
    private static XYChart overTime(String title, long[] sentNanos, double[] millis) {
        double[] seconds = Arrays.stream(sentNanos).mapToDouble(nanos -> nanos / NANOS_PER_SECOND).toArray();
        XYChart chart = chart(title, "seconds since the first publish", "latency ms");
        chart.getStyler().setYAxisLogarithmic(true).setLegendVisible(false).setMarkerSize(3);
        chart.addSeries("latency", seconds, millis).setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        return chart;
    }

    private static XYChart chart(String title, String xTitle, String yTitle) {
        return new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle)
                .build();
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
