package eu.arrowhead.eventhandler.store;

import java.util.List;

/** Where the {@link JournalWriter} commits its batches: the event database. */
interface BatchSink {

    /**
     * Writes the events of a batch, records its last id and saves the missing ranges, in one transaction.
     *
     * @param batch   consecutive entries, in id order
     * @param missing the ranges to save with the events (see {@link MissingRanges#unsaved})
     * @throws RuntimeException if the transaction failed
     */
    void write(List<WriteBuffer.Entry> batch, List<MissingRanges.Range> missing);

    /**
     * Forces what {@link #write} committed onto stable storage, so that a power cut cannot take it back.
     *
     * @throws RuntimeException if it could not be forced
     */
    void force();

    /**
     * Commits a small write and forces it to disk, as a probe: asked while writes fail, to know when to try the
     * events again. Answering a query is not enough: H2 on a full disk answers every one and fails the next commit.
     *
     * @throws RuntimeException if the write failed
     */
    void takesWrites();

    /**
     * The last id recorded by a committed {@link #write}. Asked before writing again after a write failed,
     * since a commit may have happened with only its answer lost (a connection cut after the commit).
     *
     * @throws RuntimeException if the database cannot be read
     */
    long lastWrittenId();
}
