package eu.arrowhead.eventhandler.bench;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;

/**
 * A row of a {@link ResultTable} that also carries the event latencies its cells summarise, so that
 * {@link ResultWriter} can plot them beside the table; to everything else it is just the list of its cells.
 */
final class PlottedRow extends AbstractList<Object> {
    private final String label;
    private final List<Object> cells;
    private final DeliveryLog.Outcome outcome;

    /**
     * @param label   names the row's plots
     * @param outcome the measured events, whose latencies and send times are plotted
     */
    PlottedRow(String label, List<Object> cells, DeliveryLog.Outcome outcome) {
        this.label = label;
        // A copy that keeps nulls, the cells that could not be measured.
        this.cells = new ArrayList<>(cells);
        this.outcome = outcome;
    }

    String label() {
        return label;
    }

    DeliveryLog.Outcome outcome() {
        return outcome;
    }

    @Override
    public Object get(int index) {
        return cells.get(index);
    }

    @Override
    public int size() {
        return cells.size();
    }
}
