package eu.arrowhead.eventhandler.cluster;

import eu.arrowhead.eventhandler.config.ClusterConfig;
import eu.arrowhead.eventhandler.store.LogExport;
import eu.arrowhead.eventhandler.store.LogExport.Exported;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.PurgeOptions;
import io.nats.client.api.MessageGetRequest;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamState;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a single node's log into a cluster's stream with the events' own ids, so that a subscriber resuming
 * with an id of the single node resumes exactly on any node of the cluster.
 *
 * <p>The stream's sequence is the id. A new or empty stream is made to start at the log's first id, and the
 * events are published in id order, each acknowledged with its own id (else the run stops: something else
 * publishes into the stream). Not with {@code Nats-Expected-Last-Sequence}: nats-server 2.9 checks it against a
 * count that the purge moving an empty stream's next sequence leaves behind ("wrong last sequence: 1" for id 5). An id the log does not hold (a range lost in an outage or crash, a damaged range of H2's
 * file, the ids given out after its last event) is taken by a placeholder on {@link StreamMessages#fillerSubject}
 * that is deleted once stored, so that the stream holds exactly the log's events and goes on after the last id the
 * single node gave out.
 *
 * <p>Resumable: a run starts from the stream's last sequence, after checking that what the stream holds is this
 * log's (its first and last events compared with the log's); placeholders a stopped run left are deleted first.
 * An interrupted run is run again; nothing is stored twice: each message carries its id as its
 * {@code Nats-Msg-Id}, so one a stopped run had in flight and the next sends again is stored once.
 */
public final class LogMigration {
    private static final Logger LOG = LoggerFactory.getLogger(LogMigration.class);
    /** JetStream's error code for a sequence without a message. */
    private static final int NO_MESSAGE = 10037;
    private static final long PROGRESS_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Not a publisher's: theirs start with the length of their scope. */
    private static final String MSG_ID_PREFIX = "eh-migration:";

    private final ClusterConfig config;
    private final LogExport log;
    private final int pageEvents;
    private final Runnable afterPage;
    private final StreamMessages messages;
    private final PublishOptions options;
    private JetStream jetStream;
    private JetStreamManagement management;

    /**
     * @param pageEvents events read from the log and sent before their acknowledgements are awaited
     * @param afterPage  run after each page is acknowledged (tests stop a run there)
     */
    LogMigration(ClusterConfig config, LogExport log, int pageEvents, Runnable afterPage) {
        this.config = config;
        this.log = log;
        this.pageEvents = pageEvents;
        this.afterPage = afterPage;
        this.messages = new StreamMessages(config.subjectPrefix());
        this.options = PublishOptions.builder().expectedStream(config.stream()).build();
    }

    /**
     * Copies the log into the stream {@code cluster.stream}, or what of it a stopped run did not.
     *
     * @return the number of events copied by this run
     * @throws SetupRefused if the stream holds what is not this log's
     * @throws IOException  if NATS or the stream fails; running again resumes
     */
    public static long run(ClusterConfig config, LogExport log, int pageEvents) throws IOException {
        return new LogMigration(config, log, pageEvents, () -> { }).run();
    }

    long run() throws IOException {
        try (ClusterConnection connection = ClusterConnection.connect(config, "migration")) {
            jetStream = connection.jetStream(config.timeout());
            management = connection.management(config.timeout());
            return copy();
        } catch (JetStreamApiException e) {
            throw new IOException("the stream " + config.stream() + " refused the migration: " + e.getMessage()
                    + "; run it again to resume", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted; run the migration again to resume", e);
        }
    }

    private long copy() throws IOException, JetStreamApiException, InterruptedException {
        List<Exported> first = log.page(0, 1);
        long lastGiven = log.lastGivenId();
        long firstId = first.isEmpty() ? lastGiven + 1 : first.get(0).id();
        StreamInfo info = StreamSetup.ensure(management, config.withFirstId(firstId), messages);
        long last = resumePoint(info.getStreamState(), firstId, lastGiven);
        LOG.info("migrating the log's ids {}-{} into the stream {}: {}", firstId, lastGiven, config.stream(),
                last < firstId ? "from its start" : "resuming after id " + last);
        long copied = 0;
        long started = System.nanoTime();
        long reported = started;
        List<Exported> page = log.page(last, pageEvents);
        while (!page.isEmpty()) {
            last = append(page, last);
            copied += page.size();
            afterPage.run();
            if (System.nanoTime() - reported >= PROGRESS_EVERY_NANOS) {
                reported = System.nanoTime();
                LOG.info("migrated {} events, up to id {} of {} ({} events/s)", copied, last, lastGiven,
                        copied * TimeUnit.SECONDS.toNanos(1) / Math.max(1, reported - started));
            }
            page = log.page(last, pageEvents);
        }
        fill(last, lastGiven);
        LOG.info("migration done: {} events copied by this run, the stream {} holds the log's events up to id {};"
                + " the cluster's ids go on after it", copied, config.stream(), lastGiven);
        return copied;
    }

    /**
     * Where this run starts: the stream's last sequence, once it is known to be a prefix of this log (a new or
     * empty stream is moved to just before the log's first id).
     */
    private long resumePoint(StreamState state, long firstId, long lastGiven)
            throws IOException, JetStreamApiException {
        long last = state.getLastSequence();
        if (last > lastGiven) {
            throw refused("it holds ids up to " + last + ", after the last id the log gave out (" + lastGiven
                    + "): events were published into it");
        }
        if (state.getMsgCount() == 0) {
            if (last >= firstId) {
                throw refused("it is empty but its next id is " + (last + 1) + ", after the log's first id "
                        + firstId);
            }
            if (last < firstId - 1) {
                // A purge up to a sequence past the end moves the stream's next sequence there.
                management.purgeStream(config.stream(), PurgeOptions.builder().sequence(firstId).build());
            }
            return firstId - 1;
        }
        long streamFirst = state.getFirstSequence();
        if (streamFirst < firstId) {
            throw refused("it holds id " + streamFirst + ", before the log's first id " + firstId);
        }
        requireSame(streamFirst);
        long lastLogged = log.lastIdAtOrBefore(last);
        if (lastLogged > streamFirst) {
            requireSame(lastLogged);
        }
        deleteLeftPlaceholders(streamFirst);
        return last;
    }

    /** Deletes the placeholders a stopped run stored and had not deleted yet. */
    private void deleteLeftPlaceholders(long from) throws IOException, JetStreamApiException {
        for (long seq = from; ; ) {
            MessageInfo left;
            try {
                left = management.getMessage(config.stream(),
                        MessageGetRequest.nextForSubject(seq, messages.fillerSubject()));
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() == NO_MESSAGE) {
                    return;
                }
                throw e;
            }
            delete(left.getSeq());
            seq = left.getSeq() + 1;
        }
    }

    /** Refuses unless the stream's message of {@code id} is the log's event of that id. */
    private void requireSame(long id) throws IOException, JetStreamApiException {
        Exported logged = log.event(id);
        MessageInfo stored;
        try {
            stored = management.getMessage(config.stream(), id);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != NO_MESSAGE) {
                throw e;
            }
            stored = null;
        }
        if (logged == null || stored == null
                || !stored.getSubject().equals(messages.subject(logged.event().topicKey()))
                || !Arrays.equals(stored.getData(), logged.event().json())) {
            throw refused("its event " + id + " is not the log's event " + id);
        }
    }

    private SetupRefused refused(String why) {
        return new SetupRefused("the stream " + config.stream() + " is not a copy of this log in progress: " + why
                + ". Migrate into a new stream (cluster.stream) or delete this one");
    }

    /**
     * Sends a page of events in id order and waits for their acknowledgements; the ids the log lacks before an
     * event are taken first ({@link #fill}), once what was sent before them is acknowledged.
     *
     * @return the page's last id
     */
    private long append(List<Exported> page, long last) throws IOException, JetStreamApiException,
            InterruptedException {
        List<CompletableFuture<PublishAck>> acks = new ArrayList<>(page.size());
        long previous = last;
        long sentFrom = last + 1;
        for (Exported event : page) {
            if (event.id() > previous + 1) {
                await(acks, sentFrom);
                acks.clear();
                fill(previous, event.id() - 1);
                sentFrom = event.id();
            }
            acks.add(publish(messages.encodeMigrated(event.event(), messageId(event.id()))));
            previous = event.id();
        }
        await(acks, sentFrom);
        return previous;
    }

    /** Takes the ids in ({@code after}, {@code upTo}] with placeholders, a page at a time, then deletes them. */
    private void fill(long after, long upTo) throws IOException, JetStreamApiException, InterruptedException {
        for (long from = after + 1; from <= upTo; from += pageEvents) {
            long to = Math.min(upTo, from + pageEvents - 1);
            List<CompletableFuture<PublishAck>> acks = new ArrayList<>();
            for (long id = from; id <= to; id++) {
                acks.add(publish(filler(id)));
            }
            await(acks, from);
            for (long id = from; id <= to; id++) {
                delete(id);
            }
        }
    }

    /**
     * The {@code Nats-Msg-Id} of the message of an id: sent again within the duplicate window (a run stopped with
     * publishes in flight, then run again), it is not stored twice.
     */
    private static String messageId(long id) {
        return MSG_ID_PREFIX + id;
    }

    private CompletableFuture<PublishAck> publish(Message message) {
        return jetStream.publishAsync(message, options);
    }

    /** Waits for acknowledgements of consecutive ids from {@code firstId}, each with its id. */
    private void await(List<CompletableFuture<PublishAck>> acks, long firstId) throws IOException,
            InterruptedException {
        long id = firstId;
        for (CompletableFuture<PublishAck> ack : acks) {
            try {
                long stored = ack.get(config.timeout().toNanos(), TimeUnit.NANOSECONDS).getSeqno();
                if (stored != id) {
                    throw new IOException("the stream stored id " + id + " as " + stored);
                }
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                throw new IOException("the stream did not store id " + id + ": " + cause.getMessage()
                        + "; run the migration again to resume", e);
            } catch (TimeoutException e) {
                throw new IOException("the stream did not acknowledge id " + id + " within " + config.timeout()
                        .toSeconds() + " s (cluster.timeout-seconds); run the migration again to resume", e);
            }
            id++;
        }
    }

    private Message filler(long id) {
        Headers headers = new Headers();
        headers.put(StreamMessages.MSG_ID, messageId(id));
        return NatsMessage.builder().subject(messages.fillerSubject()).headers(headers).build();
    }

    /** Deletes a placeholder; one already gone is fine. */
    private void delete(long id) throws IOException, JetStreamApiException {
        try {
            management.deleteMessage(config.stream(), id, false);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != NO_MESSAGE && e.getApiErrorCode() != 10057) {
                throw e;
            }
        }
    }
}
