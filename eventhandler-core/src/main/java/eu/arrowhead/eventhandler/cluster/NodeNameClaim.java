package eu.arrowhead.eventhandler.cluster;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

/**
 * A node's claim to its {@code cluster.node-name} among the nodes of one stream. Two nodes of one name could not be
 * told apart in {@code mgmt/health}, in NATS's connection list or in the logs, so a node whose name a running node
 * answers to is refused at start.
 *
 * <p>No shared record is kept: a record would outlive a node killed with {@code kill -9} and refuse its restart. A
 * node asks on its name's subject instead; a running node of that name answers with who it is, and NATS answers
 * "no responders" at once when none listens. A node that is frozen (or cut off) does not answer, and its name may
 * be taken meanwhile; a node still in its graceful stop answers, and its name is taken only once it stopped. Two
 * nodes of one name may both get in when they start within the same few milliseconds, or while the NATS servers
 * they are connected to cannot reach each other. NATS permissions must let a node publish and subscribe on
 * {@code _EH_NODE.>}; where they do not, the check finds no one.
 */
final class NodeNameClaim {
    /** How long a running node has to answer: it answers on NATS's own thread, in well under a millisecond. */
    private static final Duration ANSWER_WAIT = Duration.ofSeconds(2);

    private NodeNameClaim() {
    }

    /**
     * Asks whether a running node of the stream answers to {@code nodeName}, and, if none does, answers to it for as
     * long as {@code nats} is open.
     *
     * @throws SetupRefused if a running node has the name
     */
    static void take(Connection nats, String stream, String nodeName) throws SetupRefused {
        String subject = "_EH_NODE." + stream + "." + token(nodeName);
        Message answer;
        try {
            answer = nats.request(subject, new byte[0], ANSWER_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SetupRefused("interrupted while asking whether cluster.node-name " + nodeName + " is in use");
        }
        if (answer != null && answer.getData() != null && answer.getData().length > 0) {
            throw new SetupRefused("cluster.node-name " + nodeName + " is in use by a running node of the stream "
                    + stream + " (" + new String(answer.getData(), StandardCharsets.UTF_8) + "); give each node a"
                    + " name of its own");
        }
        Instant since = Instant.now();
        Dispatcher answering = nats.createDispatcher(request -> {
            if (request.getReplyTo() != null) { // a plain publish on the subject asks nothing
                nats.publish(request.getReplyTo(), ("started " + since + ", connected to " + nats.getConnectedUrl())
                        .getBytes(StandardCharsets.UTF_8));
            }
        });
        answering.subscribe(subject);
    }

    /**
     * The name as one token of a NATS subject: a dot would make it two, a space or a wildcard is not allowed.
     * Every other character stays; those are written as {@code %} and four hex digits, so that no two names meet.
     */
    static String token(String nodeName) {
        StringBuilder token = new StringBuilder();
        for (char c : nodeName.toCharArray()) {
            if (c == '.' || c == '*' || c == '>' || c == '%' || Character.isWhitespace(c) || Character.isISOControl(c)) {
                token.append(String.format("%%%04x", (int) c));
            } else {
                token.append(c);
            }
        }
        return token.toString();
    }
}
