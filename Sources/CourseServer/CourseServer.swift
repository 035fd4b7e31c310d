import ClientTarget
import Foundation
import Hummingbird
import Logging

/// `coursepack serve`: a synced target over HTTP for a classroom or a kiosk. Hummingbird's
/// `FileMiddleware` serves the files (MIME types, `Range` for video, conditional requests,
/// `index.html` for folders, so the target's course list is at `/`); `TargetGuard` in front of
/// it keeps every request inside the target and away from its state folders. The one thing it
/// writes is an answer a page posts to `/_coursepack/answers`, into that course's outbox.
public struct CourseServer: Sendable {
    public let root: String
    public let host: String
    public let port: Int

    public init(root: String, host: String = "127.0.0.1", port: Int = 8080) {
        self.root = root
        self.host = host
        self.port = port
    }

    /// Serves until the process is interrupted (SIGINT or SIGTERM). `started` gets the port
    /// listened on (the one chosen by the system when `port` is 0).
    public func run(started: @escaping @Sendable (Int) -> Void) async throws {
        guard let realRoot = Self.realPath(root) else { throw CourseServerError.noTarget(root) }
        var logger = Logger(label: "coursepack-serve")
        logger.logLevel = .warning
        let router = Router()
        router.middlewares.add(TargetGuard<BasicRequestContext>(root: realRoot))
        // Problem pages post the answers given on them here (see ProblemRenderer); each goes to
        // the outbox of the course that has the block, for `sync --submit` to send.
        let target = ClientTarget(root: realRoot)
        router.post(RouterPath(Self.answersPath)) { request, _ -> Response in
            let body = try await request.body.collect(upTo: Self.answerSizeLimit)
            do {
                let entry = try target.recordAnswer(Data(body.readableBytesView))
                return Self.json(.created, ["id": entry.id, "usage_id": entry.usageID])
            } catch {
                return Self.json(.badRequest, ["error": "\(error)"])
            }
        }
        router.middlewares.add(
            FileMiddleware(realRoot + "/", searchForIndexHtml: true, logger: logger)
                .withAdditionalMediaTypes(forFileExtensions: [
                    "vtt": MediaType(type: .text, subType: "vtt"),
                    "srt": MediaType(type: .application, subType: "x-subrip"),
                    "mjs": MediaType(type: .text, subType: "javascript"),
                ]))
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "coursepack"),
            onServerRunning: { channel in started(channel.localAddress?.port ?? port) },
            logger: logger)
        try await app.runService()
    }

    /// Where pages post answers; not a file, so no file of the target can shadow it.
    public static let answersPath = "/_coursepack/answers"
    static let answerSizeLimit = 1 << 20

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

/// Refuses, before any file is looked up, a request that could leave the target or reach its
/// private state: `..` or `.` components, hidden names (`.coursepack-sync`), backslashes, NUL,
/// percent-encoding that still encodes a dot, slash or backslash once decoded (double
/// encoding), and any path whose real location (symbolic links resolved) is outside the target.
struct TargetGuard<Context: RequestContext>: RouterMiddleware {
    let root: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let decoded = request.uri.path.removingPercentEncoding, Self.isSafe(decoded) else {
            throw HTTPError(.forbidden, message: "outside the served folder")
        }
        if let real = CourseServer.realPath(root + decoded), real != root, !real.hasPrefix(root + "/") {
            throw HTTPError(.forbidden, message: "outside the served folder")
        }
        return try await next(request, context)
    }

    static func isSafe(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.contains("\\"), !path.contains("\0") else { return false }
        let lower = path.lowercased()
        for encoded in ["%2e", "%2f", "%5c", "%00"] where lower.contains(encoded) { return false }
        return path.split(separator: "/", omittingEmptySubsequences: true).allSatisfy { !$0.hasPrefix(".") }
    }
}
