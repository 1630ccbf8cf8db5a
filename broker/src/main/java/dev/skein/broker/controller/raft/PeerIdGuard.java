package dev.skein.broker.controller.raft;

import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.Descriptors;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumSet;

/**
 * Refuses Raft server-to-server calls (append entries, votes, snapshot installs, elections)
 * addressed to another peer id than this server's. Ratis checks only the group of such a call, not
 * its target, and a new incarnation of a voter listens on the same address as its old self: without
 * this guard it would answer for the old peer (vote, acknowledge entries) with an empty log, which
 * is exactly the amnesia voter keys exist to prevent. Client and admin calls pass untouched.
 */
final class PeerIdGuard implements ServerInterceptor, GrpcServices.Customizer {
    private static final Logger log = LoggerFactory.getLogger(PeerIdGuard.class);

    private final RaftPeerId self;

    PeerIdGuard(RaftPeerId self) {
        this.self = self;
    }

    @Override
    public NettyServerBuilder customize(NettyServerBuilder builder, EnumSet<GrpcServices.Type> types) {
        return builder.intercept(this);
    }

    /** The peer a server-to-server request is addressed to, or null for any other message. */
    static RaftPeerId target(Object message) {
        if (!(message instanceof Message m)) {
            return null;
        }
        Descriptors.FieldDescriptor f = m.getDescriptorForType().findFieldByName("serverRequest");
        if (f == null || !m.hasField(f) || !(m.getField(f) instanceof RaftRpcRequestProto rpc) || rpc.getReplyId().isEmpty()) {
            return null;
        }
        return RaftPeerId.valueOf(rpc.getReplyId());
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        ServerCall.Listener<Q> delegate = next.startCall(call, headers);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
            private boolean refused;

            @Override
            public void onMessage(Q message) {
                if (refused) {
                    return;
                }
                RaftPeerId target = target(message);
                if (target != null && !target.equals(self)) {
                    refused = true;
                    log.debug("{} refuses {} addressed to peer {}", self, call.getMethodDescriptor().getBareMethodName(), target);
                    call.close(Status.FAILED_PRECONDITION.withDescription(self + " is not peer " + target
                            + " (a new incarnation of the voter)"), new Metadata());
                    return;
                }
                super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                if (!refused) {
                    super.onHalfClose();
                }
            }

            @Override
            public void onReady() {
                if (!refused) {
                    super.onReady();
                }
            }
        };
    }
}
