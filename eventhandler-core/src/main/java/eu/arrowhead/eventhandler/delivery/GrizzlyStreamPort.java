package eu.arrowhead.eventhandler.delivery;

import java.io.IOException;
import org.glassfish.grizzly.CloseListener;
import org.glassfish.grizzly.Closeable;
import org.glassfish.grizzly.Connection;
import org.glassfish.grizzly.ICloseType;
import org.glassfish.grizzly.WriteHandler;
import org.glassfish.grizzly.http.io.OutputBuffer;
import org.glassfish.grizzly.http.server.Response;
import org.glassfish.grizzly.memory.Buffers;
import org.glassfish.grizzly.memory.MemoryManager;

/**
 * A stream's connection as Grizzly holds it: its suspended response's non-blocking output ({@code canWrite} before
 * every write keeps the write from blocking), and the connection underneath for its close and its bound.
 */
final class GrizzlyStreamPort implements StreamPort {
    private final Response response;
    private final OutputBuffer out;
    private final Connection<?> connection;
    private final MemoryManager<?> memory;
    private WriteHandler writePossible;
    private CloseListener<Closeable, ICloseType> connectionClosed;

    /**
     * @param sendBufferBytes {@code subscriber.send-buffer-bytes}: what the connection may hold unsent before
     *                        {@link #canWrite} says no
     */
    GrizzlyStreamPort(Response response, int sendBufferBytes) {
        this.response = response;
        this.out = response.getOutputBuffer();
        this.connection = response.getRequest().getContext().getConnection();
        // The request's parameters are read by now, and the request lives as long as the stream.
        OpenStreamRelease.afterParameters(response.getRequest());
        this.memory = connection.getMemoryManager();
        // Grizzly's own default is 4 x the socket's send buffer (megabytes on loopback) per connection.
        connection.setMaxAsyncWriteQueueSize(sendBufferBytes);
    }

    @Override
    public void bind(Listener listener) {
        writePossible = new WriteHandler() {
            @Override
            public void onWritePossible() {
                listener.writable();
            }

            @Override
            public void onError(Throwable t) {
                listener.failed(t);
            }
        };
        connectionClosed = (closeable, type) -> listener.clientClosed();
    }

    @Override
    public boolean canWrite() {
        return out.canWrite();
    }

    @Override
    public void write(byte[] frame) throws IOException {
        out.writeBuffer(Buffers.wrap(memory, frame));
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void notifyCanWrite() {
        out.notifyCanWrite(writePossible);
    }

    @Override
    public void watchClose() {
        connection.addCloseListener(connectionClosed);
    }

    @Override
    public void unwatchClose() {
        connection.removeCloseListener(connectionClosed);
    }

    @Override
    public boolean isOpen() {
        return connection.isOpen();
    }

    @Override
    public void headersWritten() {
        OpenStreamRelease.afterCommit(response);
    }

    @Override
    public void refuse(StreamRefusal refusal, String message) throws IOException {
        refusal.write(response, EventStreamHandler.PATH, message);
        response.resume();
    }

    @Override
    public void end() {
        response.resume();
    }

    @Override
    public void terminate() {
        connection.terminateSilently();
    }
}
