import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The HTTP/1 channel with WebSocket upgrade, plus an answer to a request head the HTTP decoder refuses, and a slot
/// below Hummingbird's codec from which a file is sent with `sendfile` (``RawBodySlot``).
///
/// Hummingbird answers such a head with 400 on a plain HTTP/1 channel, but on the upgradable one the failed head
/// leaves the upgrade negotiation waiting, with no answer at all, and the connection stays open until the client
/// gives up. Here the client gets what a web server sends, `431 Request Header Fields Too Large` for a head over the
/// limits (80 KB) and `400 Bad Request` for one that is not HTTP, and the connection is closed.
struct AnsweringUpgradeChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(RefusedHeadAnswer(), position: .after(decoder))
            try operations.addHandler(RawBodySlot(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Answers the error the HTTP decoder raises for a request head, once, and passes everything on.
final class RefusedHeadAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Touched on the channel's event loop only.
    private var answered = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError, !answered {
            answered = true
            answer(Self.status(error), on: context.channel)
        }
        context.fireErrorCaught(error)
    }

    /// The status line for a refused head.
    static func status(_ error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow: "431 Request Header Fields Too Large"
        default: "400 Bad Request"
        }
    }

    private func answer(_ status: String, on channel: any Channel) {
        let text = "HTTP/1.1 \(status)\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        // Then only this side is closed, and the client's last bytes are read and dropped: closed with bytes of the
        // client's unread, the connection would be reset, and a reset can drop the answer before the client reads it.
        // A client that does not close its side within two seconds is cut off.
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        // Written from the response encoder's place in the pipeline: straight to the socket, below the encoder
        // (which takes response parts, not bytes).
        guard let encoder = try? channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            channel.close(promise: nil)
            return
        }
        encoder.writeAndFlush(NIOAny(channel.allocator.buffer(string: text))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
        }
    }
}
