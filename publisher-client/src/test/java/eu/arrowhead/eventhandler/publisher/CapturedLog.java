package eu.arrowhead.eventhandler.publisher;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.LoggerFactory;

/** The debug log of one class, collected instead of printed. */
final class CapturedLog extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    final Queue<String> messages = new ConcurrentLinkedQueue<>();
    private Logger logger;
    private Level level;

    static CapturedLog of(Class<?> type) {
        CapturedLog log = new CapturedLog();
        log.logger = (Logger) LoggerFactory.getLogger(type);
        log.level = log.logger.getLevel();
        log.start();
        log.logger.setLevel(Level.DEBUG);
        log.logger.setAdditive(false);
        log.logger.addAppender(log);
        return log;
    }

    @Override
    protected void append(ILoggingEvent event) {
        messages.add(event.getFormattedMessage());
    }

    /** Whether a collected line contains {@code text}. */
    boolean contains(String text) {
        return messages.stream().anyMatch(line -> line.contains(text));
    }

    /** Gives the class its log back. */
    @Override
    public void close() {
        logger.detachAppender(this);
        logger.setAdditive(true);
        logger.setLevel(level);
        stop();
    }
}
