import Diagnostics
import Foundation
import SafeText

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one place credentials may go: the configured LMS's scheme, host and port (and path
/// prefix, for an LMS behind one). Checked once, before any request.
public struct LMSOrigin: Sendable, Equatable {
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case invalid(url: String, reason: String)
        case insecure(url: String, host: String)

        public var description: String {
            switch self {
            case .invalid(let url, let reason): return "--lms-url \(RemoteText.clean(url)): \(reason)"
            case .insecure(let url, let host):
                return "--lms-url \(RemoteText.clean(url)): refusing to send credentials over plain http to \(host), which is not this machine (use https, or --allow-insecure-lms on a network you trust)"
            }
        }
    }

    public let scheme: String
    public let host: String
    public let port: Int?
    /// Empty, or a path prefix starting with `/` without a trailing one.
    public let path: String

    /// Everything before the paths the client appends, rebuilt from the parts checked here (not
    /// the text given, so no parser sees anything this one did not).
    public var base: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed)\(port.map { ":\($0)" } ?? "")\(path)"
    }

    public init(_ text: String, allowInsecure: Bool = false) throws(Refusal) {
        func refuse(_ reason: String) -> Refusal { .invalid(url: text, reason: reason) }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" }) else {
            throw refuse("only printable ASCII without spaces or backslashes is accepted")
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            throw refuse("not an http(s) URL")
        }
        guard parts.user == nil, parts.password == nil else { throw refuse("credentials in the URL are not accepted") }
        guard parts.query == nil, parts.fragment == nil else { throw refuse("a query or fragment is not accepted") }
        var host = (parts.host ?? "").lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, Self.isPlainHost(host) else { throw refuse("no valid host name") }
        var path = parts.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        guard path.split(separator: "/").allSatisfy({ $0 != "." && $0 != ".." && !$0.contains("%") }) else {
            throw refuse("the path may not hold dot-segments or percent-escapes")
        }
        if scheme == "http" && !allowInsecure && !Self.isLoopback(host) { throw .insecure(url: text, host: host) }
        self.scheme = scheme
        self.host = host
        self.port = parts.port
        self.path = path
    }

    /// A DNS name or an IP literal, nothing a URL parser could read two ways.
    static func isPlainHost(_ host: String) -> Bool {
        if host.contains(":") { return isIPv6(host) }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-")
        return host.allSatisfy(allowed.contains) && !host.hasPrefix(".") && !host.contains("..")
    }

    /// 127.0.0.0/8 written as four decimal numbers, `::1` in any spelling, or `localhost`.
    /// `inet_pton` is strict: `127.1`, `0x7f.0.0.1` and octal `0177.0.0.1` are not loopback here,
    /// whatever a resolver would make of them.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        if host.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, host, &address) == 1 else { return false }
            return withUnsafeBytes(of: &address) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { $0[0] == 127 }
    }

    static func isIPv6(_ host: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, host, &address) == 1
    }

    /// Whether `url` is on this origin: same scheme, host and port, under its path.
    func owns(_ url: URL) -> Bool {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return false }
        var other = (parts.host ?? "").lowercased()
        if other.hasPrefix("[") && other.hasSuffix("]") { other = String(other.dropFirst().dropLast()) }
        return parts.scheme?.lowercased() == scheme && other == host && parts.port == port && parts.user == nil
            && parts.percentEncodedPath.hasPrefix(path + "/")
    }
}

/// One POST to the LMS, and nothing more: no redirect is followed (a 3xx is the answer), no
/// cookie or credential store is read or written, and the body is read up to `bodyLimit`
/// decoded bytes (libcurl unpacks gzip, br and zstd as it goes; the count is of what it hands
/// over, so a compressed bomb is cut like a plain one). `identity` is asked for: a packed body
/// or one announced too large is not read at all.
struct LMSRequest: Sendable {
    static let bodyLimit = 256 << 10
    /// A batch's answer carries up to 100 results, each with its problem's HTML.
    static let batchBodyLimit = 16 << 20

    enum Outcome: Sendable, Equatable {
        /// The status, the body (up to the limit), and whether more came than was kept.
        case answered(status: Int, body: Data, truncated: Bool)
        /// The LMS answered with a redirect to `location`; the request was not repeated there.
        case redirected(status: Int, location: String)
        case failed(String)
    }

    let origin: LMSOrigin
    let timeout: TimeInterval
    var bodyLimit = LMSRequest.bodyLimit

    func post(_ url: URL, body: Data, headers: [String: String]) async -> Outcome {
        // Nothing built here leaves the origin; this check keeps it so if that ever changes.
        guard origin.owns(url) else { return .failed("\(url.absoluteString) is not on \(origin.base); not sent") }
        if origin.scheme == "http", let variable = Self.proxyVariable(for: origin.host) {
            return .failed("\(variable) names a proxy for plain http to \(origin.host), which would read the credential; not sent (unset it, add the host to no_proxy, or use https)")
        }
        var built = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        built.httpMethod = "POST"
        built.httpBody = body
        built.httpShouldHandleCookies = false
        for (name, value) in headers { built.setValue(value, forHTTPHeaderField: name) }
        built.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let request = built
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 2
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.urlCache = nil
        let collector = LMSResponseCollector(limit: bodyLimit)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: collector, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        // URLSession on Linux does not enforce timeoutIntervalForResource: a body trickled a
        // byte at a time never trips the idle timeout, and would hold the target's lock for good.
        let deadline = timeout * 2
        return await withCheckedContinuation { continuation in
            queue.addOperation {
                let task = session.dataTask(with: request)
                collector.start(task, continuation: continuation)
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
                    queue.addOperation { collector.expire(after: deadline) }
                    task.cancel()
                }
            }
        }
    }
}

extension LMSRequest {
    /// The environment variable naming a proxy that libcurl would send a plain http request to
    /// `host` through, or nil. libcurl reads these itself (URLSession on Linux cannot turn them
    /// off), and over plain http the proxy reads the credential; over https it only tunnels.
    /// Like libcurl, `HTTP_PROXY` in capitals is not read for http (httpoxy), and `no_proxy`
    /// lists hosts and domains that go direct, `*` for all.
    static func proxyVariable(for host: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let exceptions = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        if exceptions.contains("*") || exceptions.contains(where: { !$0.isEmpty && (host == $0 || host.hasSuffix("." + $0)) }) { return nil }
        return ["http_proxy", "all_proxy", "ALL_PROXY"].first { !(environment[$0] ?? "").isEmpty }
    }
}

/// The delegate of one `LMSRequest`; every call comes on the session's serial queue.
final class LMSResponseCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let limit: Int
    private var status: Int?
    private var body = Data()
    private var truncated = false
    private var redirect: (status: Int, location: String)?
    private var continuation: CheckedContinuation<LMSRequest.Outcome, Never>?

    init(limit: Int) {
        self.limit = limit
    }

    /// Set when the request's deadline passed: the failure says so instead of "cancelled".
    private var expired: TimeInterval?

    func expire(after seconds: TimeInterval) {
        expired = seconds
    }

    func start(_ task: URLSessionDataTask, continuation: CheckedContinuation<LMSRequest.Outcome, Never>) {
        self.continuation = continuation
        task.resume()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        redirect = (response.statusCode, request.url?.absoluteString ?? "")
        completionHandler(nil)
    }

    /// A body announced larger than the limit, or packed although `identity` was asked for, is
    /// not read at all. Counting alone bounds what is kept, not what the HTTP stack queues for
    /// this delegate before the cancel lands: a 1 GB zstd bomb (RLE unpacks faster than the queue
    /// drains) still peaked at 188 MB that way; refused here, nothing of it is unpacked.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        status = http?.statusCode
        let encoding = (http?.value(forHTTPHeaderField: "Content-Encoding") ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        if response.expectedContentLength > Int64(limit) || !(encoding.isEmpty || encoding == "identity") {
            truncated = true
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !truncated else { return }
        let room = limit - body.count
        if data.count > room {
            body.append(data.prefix(room))
            truncated = true
            // Not from this queue: `cancel` waits for the session's work queue, which may be busy
            // reading the rest, and pieces pile up here meanwhile instead of being dropped.
            DispatchQueue.global().async { dataTask.cancel() }
        } else {
            body.append(data)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let continuation else { return }
        self.continuation = nil
        let status = self.status ?? (task.response as? HTTPURLResponse)?.statusCode
        if let status, (300...399).contains(status) {
            let location = redirect?.location ?? (task.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location") ?? ""
            continuation.resume(returning: .redirected(status: status, location: location))
        } else if let redirect, status == nil {
            continuation.resume(returning: .redirected(status: redirect.status, location: redirect.location))
        } else if let status, error == nil || truncated {
            continuation.resume(returning: .answered(status: status, body: body, truncated: truncated))
        } else {
            let reason = expired.map { "no complete answer within \(Int($0)) s" } ?? error?.localizedDescription
            continuation.resume(returning: .failed(reason ?? "no HTTP response"))
        }
    }
}

extension LMSOrigin.Refusal: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .invalid: return .invalidLMSURL
        case .insecure: return .insecureLMS
        }
    }
}
