package dev.skein.broker.it;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * A bare Kafka protocol connection for tests that need exact control over requests: writes a
 * request (any API, any version) and reads its response, with no client logic in between.
 */
public final class KafkaWire implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private int correlationId;

    public KafkaWire(int port) throws IOException {
        this("127.0.0.1", port);
    }

    public KafkaWire(String host, int port) throws IOException {
        socket = new Socket(host, port);
        socket.setSoTimeout(30_000);
        in = new DataInputStream(socket.getInputStream());
        out = new DataOutputStream(socket.getOutputStream());
    }

    /** Sends a request; returns its correlation id. */
    public int write(ApiKeys api, short version, ApiMessage body) throws IOException {
        RequestHeader header = new RequestHeader(api, version, "kafka-wire-test", ++correlationId);
        ByteBuffer h = MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
        ByteBuffer b = MessageUtil.toByteBufferAccessor(body, version).buffer();
        out.writeInt(h.remaining() + b.remaining());
        out.write(h.array(), h.arrayOffset() + h.position(), h.remaining());
        out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
        out.flush();
        return correlationId;
    }

    /** Reads the next response, which must be for {@code api} at {@code version}. */
    @SuppressWarnings("unchecked")
    public <T extends ApiMessage> T read(ApiKeys api, short version) throws IOException {
        int size = in.readInt();
        byte[] bytes = new byte[size];
        in.readFully(bytes);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        ResponseHeader.parse(buf, api.responseHeaderVersion(version));
        return (T) AbstractResponse.parseResponse(api, new ByteBufferAccessor(buf), version).data();
    }

    /** True if the broker closed the connection without sending anything more. */
    public boolean readClosed() throws IOException {
        try {
            return in.read() == -1;
        } catch (java.net.SocketException e) {
            return true;
        }
    }

    public <T extends ApiMessage> T call(ApiKeys api, short version, ApiMessage body) throws IOException {
        write(api, version, body);
        return read(api, version);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
