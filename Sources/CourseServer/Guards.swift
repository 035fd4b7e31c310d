import Foundation
import Hummingbird
import SafeText

/// Refuses every request whose Host header does not name this server (see `ServedHost`).
struct HostGuard<Context: RequestContext>: RouterMiddleware {
    let host: ServedHost

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard host.accepts(authority: request.head.authority) else {
            return CourseServer.json(.forbidden, ["error": "the Host header does not name this server"])
        }
        return try await next(request, context)
    }
}

/// Serves GET and HEAD from the target's real files only (see `TargetFiles`): HTML pages
/// itself, with the run's secret put in; everything else through FileMiddleware (MIME types,
/// `Range`, `ETag`) by its real path.
struct TargetGuard<Context: RequestContext>: RouterMiddleware {
    let files: TargetFiles
    let secret: ServeSecret
    /// Larger pages are refused rather than read into memory.
    static var pageSizeLimit: Int { 32 << 20 }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        switch files.resolve(request.uri.path) {
        case .refused:
            return CourseServer.json(.forbidden, ["error": "outside the served folder"])
        case .missing:
            return CourseServer.json(.notFound, ["error": "no such file"])
        case .folderWithoutSlash:
            // One leading slash: `//name` in Location would send the browser to another host.
            return .redirect(to: "/" + request.uri.path.drop { $0 == "/" } + "/", type: .permanent)
        case .file(let real, let relative):
            if Self.isPage(real) { return try page(real, head: request.method == .head) }
            var head = request.head
            head.path = TargetFiles.encoded(relative)
            return try await next(Request(head: head, body: request.body), context)
        }
    }

    static func isPage(_ path: String) -> Bool {
        let name = path.lowercased()
        return name.hasSuffix(".html") || name.hasSuffix(".htm") || name.hasSuffix(".xhtml")
    }

    /// The page with the secret in its head, and the script that records the learner's events
    /// (see `EventScript`). Never cached: the secret changes with every run.
    /// Framed by this origin only.
    func page(_ path: String, head: Bool) throws -> Response {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return CourseServer.json(.notFound, ["error": "no such file"]) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        guard let data = try handle.read(upToCount: Self.pageSizeLimit + 1), data.count <= Self.pageSizeLimit else {
            return CourseServer.json(.contentTooLarge, ["error": "the page is over \(Self.pageSizeLimit) bytes"])
        }
        let body = Self.inserting(secret.metaTag + EventScript.tag, into: [UInt8](data))
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store", .contentLength: String(body.count),
        ]
        headers[CourseServer.FieldName("X-Content-Type-Options")!] = "nosniff"
        // Another site framing a problem page could trick the learner into submitting it
        // (clickjacking); the outline's navigation frames are on this origin.
        headers[CourseServer.FieldName("Content-Security-Policy")!] = "frame-ancestors 'self'"
        headers[CourseServer.FieldName("X-Frame-Options")!] = "SAMEORIGIN"
        return Response(status: .ok, headers: headers, body: head ? .init() : .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `tag` right after the opening `<head …>` (else `<html …>`), else before everything.
    static func inserting(_ tag: String, into page: [UInt8]) -> [UInt8] {
        let lower = page.prefix(64 << 10).map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        for element in ["<head", "<html"] {
            let pattern = Array(element.utf8)
            var start = 0
            while let found = firstIndex(of: pattern, in: lower, from: start) {
                let after = found + pattern.count
                if after < lower.count, [UInt8(ascii: ">"), 0x20, 0x09, 0x0a, 0x0d].contains(lower[after]),
                   let close = lower[after...].firstIndex(of: UInt8(ascii: ">")) {
                    return Array(page[...close]) + Array(tag.utf8) + Array(page[(close + 1)...])
                }
                start = after
            }
        }
        return Array(tag.utf8) + page
    }

    static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        for index in start...(bytes.count - pattern.count) where bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
            return index
        }
        return nil
    }
}

/// Answers the LMS-shaped paths (see `LMSURLSpace`): redirects and 404s itself, files by handing
/// the target path they name on to `TargetGuard`, which checks it like any other.
struct LMSRouteGuard<Context: RequestContext>: RouterMiddleware {
    let space: LMSURLSpace
    let files: TargetFiles

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        let path = request.uri.path
        guard let decoded = path.removingPercentEncoding, TargetFiles.isSafe(requestPath: path, decoded: decoded) else {
            return try await next(request, context)
        }
        switch space.route(decoded, referer: request.headers[.referer]) {
        case .unchanged:
            return try await next(request, context)
        case .serve(let target):
            // Kept in the LMS's shape: TargetGuard would redirect to the plain path.
            if files.resolve(TargetFiles.encoded(target)) == .folderWithoutSlash { return .redirect(to: "/" + path.drop { $0 == "/" } + "/", type: .found) }
            var head = request.head
            head.path = TargetFiles.encoded(target)
            return try await next(Request(head: head, body: request.body), context)
        case .redirect(let location):
            return .redirect(to: TargetFiles.encoded(location), type: .found)
        case .onlineOnly(let what):
            return Self.onlineOnly(what, head: request.method == .head)
        case .missing(let reason):
            return CourseServer.json(.notFound, ["error": reason])
        }
    }

    /// A small page: what a jump_to link names is not on this device.
    static func onlineOnly(_ what: String, head: Bool) -> Response {
        let escaped = HTMLEscape.escape(what, "&<>\"")
        let page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Online only</title></head><body>"
            + "<p class=\"coursepack-online-only\">This part of the course is online only: <code>\(escaped)</code> is not on this device.</p></body></html>"
        return Response(status: .notFound, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                        body: head ? .init() : .init(byteBuffer: ByteBuffer(string: page)))
    }
}
