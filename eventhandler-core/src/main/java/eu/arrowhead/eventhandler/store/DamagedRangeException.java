package eu.arrowhead.eventhandler.store;

/**
 * A read of the log reached ids that H2 cannot read (its file is damaged), found exactly by {@link DamageProbe}:
 * the reader records them ({@link DamagedRanges}) and reads again around them.
 */
final class DamagedRangeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient MissingRanges.Range range;

    DamagedRangeException(MissingRanges.Range range) {
        super("ids " + range.first() + "-" + range.last() + " cannot be read", null, false, false);
        this.range = range;
    }

    MissingRanges.Range range() {
        return range;
    }
}
