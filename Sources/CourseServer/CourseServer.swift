import Diagnostics
import ClientTarget
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import SyncClient

/// `coursepack serve`: a synced target over HTTP for a classroom or a kiosk. `TargetGuard`
/// serves only the target's own files, never its state (see `TargetFiles`), its HTML pages with
/// the run's secret in them, and the rest through Hummingbird's `FileMiddleware` (MIME types,
/// `Range` for video, conditional requests). The one thing it writes is an answer one of its
/// own pages posts to `/_coursepack/answers`, into that course's outbox (see `AnswerDesk`), and
/// the learner events its pages post to `/_coursepack/events` (see `EventDesk`).
public struct CourseServer: Sendable {
    public let root: String
    public let host: String
    public let port: Int
    /// Host names taken besides the address listened on and this machine's own names.
    public let allowedHosts: [String]
    public let limits: Limits

    public init(root: String, host: String = "127.0.0.1", port: Int = 8080, allowedHosts: [String] = [], limits: Limits = .standard) {
        self.root = root
        self.host = host
        self.port = port
        self.allowedHosts = allowedHosts
        self.limits = limits
    }

    /// What one client or page can make the server hold.
    public struct Limits: Sendable {
        /// A connection that sends no complete request (head, or the next one) for this long is
        /// closed: Hummingbird's idle timeout runs from the last complete request part, so it
        /// is also the time a request's head has to arrive in.
        public var idleSeconds: Int = 15
        /// Connections served at once; more wait in the listen queue until one closes.
        public var connections: Int = 4_096
        /// One posted answer's body.
        public var answerBytes: Int = 64 << 10
        /// The time an answer's body has to arrive in.
        public var bodySeconds: Double = 10
        public var outbox: Outbox.Quota = .standard
        /// One posted batch of events' body.
        public var eventBytes: Int = 64 << 10
        /// What one course's events journal may hold (oldest events dropped past it).
        public var events: EventOutbox.Quota = .standard

        public init() {}
        public static let standard = Limits()
    }

    /// Serves until the process is interrupted (SIGINT or SIGTERM). `started` gets the port
    /// listened on (the one chosen by the system when `port` is 0).
    public func run(started: @escaping @Sendable (Int) -> Void) async throws {
        guard let realRoot = Self.realPath(root) else { throw CourseServerError.noTarget(root) }
        var logger = Logger(label: "coursepack-serve")
        logger.logLevel = .warning
        let connections = Self.connectionCap(limits.connections)
        let listening = ListeningPort()
        let served = ServedHost(bind: host, listening: listening, allowed: Set(allowedHosts))
        let router = makeRouter(root: realRoot, host: served, logger: logger)
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .seconds(Int64(limits.idleSeconds)))),
            configuration: .init(
                address: .hostname(host, port: port), serverName: "coursepack",
                availableConnectionsDelegate: MaximumAvailableConnections(connections, logger: logger)),
            onServerRunning: { channel in
                let chosen = channel.localAddress?.port ?? port
                listening.set(chosen)
                started(chosen)
            },
            logger: logger)
        try await app.runService()
    }

    func makeRouter(root realRoot: String, host: ServedHost, logger: Logger) -> Router<BasicRequestContext> {
        let secret = ServeSecret()
        let router = Router()
        router.middlewares.add(HostGuard<BasicRequestContext>(host: host))
        // Problem pages post the answers given on them (see ProblemRenderer); each goes to the
        // outbox of the course that has the block, for `sync --submit` to send. They read back
        // their block's latest state (waiting, graded, refused) to show it.
        let desk = AnswerDesk(target: ClientTarget(root: realRoot), secret: secret, host: host, limits: limits)
        router.middlewares.add(AnswerStateRoute<BasicRequestContext>(desk: desk))
        // Course scripts written for the LMS find their pages and files by its URLs.
        let space = LMSURLSpace(root: realRoot)
        router.middlewares.add(LMSRouteGuard<BasicRequestContext>(space: space, files: TargetFiles(root: realRoot)))
        router.middlewares.add(TargetGuard<BasicRequestContext>(files: TargetFiles(root: realRoot), secret: secret))
        router.post(RouterPath(Self.answersPath)) { request, _ -> Response in await desk.answer(request) }
        // Every served page records the learner's events (see EventScript) into its course's
        // bounded events journal, for `sync --submit` to send.
        let events = EventDesk(secret: secret, host: host, limits: limits, space: space)
        router.post(RouterPath(Self.eventsPath)) { request, _ -> Response in await events.events(request) }
        router.middlewares.add(
            FileMiddleware(realRoot + "/", searchForIndexHtml: true, logger: logger)
                .withAdditionalMediaTypes(forFileExtensions: [
                    "vtt": MediaType(type: .text, subType: "vtt"),
                    "srt": MediaType(type: .application, subType: "x-subrip"),
                    "mjs": MediaType(type: .text, subType: "javascript"),
                ]))
        return router
    }

    /// HTTPTypes' field name, reached through Hummingbird's re-export of `HTTPFields`.
    typealias FieldName = HTTPFields.Element.Name
    /// 507: the answer was fine, the course's outbox has no room for it.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")

    /// Where pages post answers; not a file, so no file of the target can shadow it.
    public static let answersPath = "/_coursepack/answers"
    /// Where pages read their block's latest answer state (`GET …?usage_id=ID`).
    public static let statePath = "/_coursepack/state"
    /// Where pages post the learner's events.
    public static let eventsPath = "/_coursepack/events"

    /// The cap, kept under the open-file limit (raised to its hard maximum first): past that
    /// limit accept() fails, and a server that cannot accept is a server that is down. Half
    /// of what is left: each connection may have a file open while it is answered.
    static func connectionCap(_ wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return min(wanted, 512) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // Room for the outboxes, the listening socket and what the runtime keeps open.
        let available = (Int(min(limit.rlim_cur, 1 << 30)) - 128) / 2
        return max(1, min(wanted, available))
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

public enum CourseServerError: Error, CustomStringConvertible {
    case noTarget(String)
    public var description: String {
        switch self {
        case .noTarget(let path): return "\(path): cannot be served: no such folder"
        }
    }
}

extension CourseServerError: Diagnosable {
    public var diagnosticID: DiagnosticID { .cannotServe }
}
