package eu.arrowhead.eventhandler.bench;

import java.net.URI;
import java.util.OptionalLong;

/**
 * A server already running, given by its address. Its threads and memory are seen only through
 * {@code /proc} and only when its process id is given: the server's heap and thread names stay hidden.
 */
record RemoteTarget(URI baseUri, OptionalLong pid) implements Target {

    @Override
    public ResourceSnapshot snapshot() {
        return pid.isEmpty() ? ResourceSnapshot.UNKNOWN : ProcStatus.read(Long.toString(pid.getAsLong())).snapshot();
    }

    @Override
    public void close() {
        // the server is not ours to stop
    }
}
