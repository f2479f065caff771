package eu.arrowhead.eventhandler.bench;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * What the peers' subscribers on the socket share: the broker's address, the prefix that the loop's topic
 * or subject puts before the event type, and one delivery log per member.
 */
abstract class PeerFleetProtocol implements FleetProtocol {
    private final InetSocketAddress address;
    /** What the topic or subject puts before the event type. */
    protected final String prefix;
    private final List<DeliveryLog> logs;

    /** @param logs member i's messages go to log i */
    PeerFleetProtocol(InetSocketAddress address, String prefix, List<DeliveryLog> logs) {
        this.address = address;
        this.prefix = prefix;
        this.logs = logs;
    }

    @Override
    public final InetSocketAddress address() {
        return address;
    }

    /** Records a message for {@code member}: the peers give no ids, the payload tells the event. */
    protected final void received(int member, String topic, String payload, long nanos) {
        logs.get(member).received(Sends.NO_ID, topic.substring(prefix.length()), payload, nanos);
    }
}
