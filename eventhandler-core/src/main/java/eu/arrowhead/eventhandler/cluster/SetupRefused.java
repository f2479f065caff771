package eu.arrowhead.eventhandler.cluster;

import java.io.IOException;

/**
 * A node cannot join, and waiting will not change that: JetStream is off, the stream on its subjects is another
 * cluster's, the node's name is taken. Joining gives up at once with this, rather than trying again until its
 * patience runs out.
 */
final class SetupRefused extends IOException {
    SetupRefused(String message) {
        super(message);
    }
}
