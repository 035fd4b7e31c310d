import Foundation
import Synchronization

/// The port serve listens on, known once it is listening (the system picks it for `--port 0`).
final class ListeningPort: Sendable {
    private let value = Mutex<Int?>(nil)
    var port: Int? { value.withLock { $0 } }
    func set(_ port: Int) { value.withLock { $0 = port } }
}

/// The names a request may give for `serve` in its Host header (and its Origin): the address it
/// listens on, `localhost` names when that is loopback, and when it listens on every interface,
/// this machine's own addresses and host name. Anything else is refused: a name an attacker
/// controls and points at this device (DNS rebinding) would make their page same-origin with
/// ours, able to read the pages' secret and post answers.
struct ServedHost: Sendable {
    let bind: String
    let listening: ListeningPort
    /// Names the operator gave (`--allow-host`): a name the classroom's DNS gives the device.
    var allowed: Set<String> = []

    static let loopbackNames: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// `authority` is a Host header's value: `name`, `name:port`, `[v6]:port`.
    func accepts(authority: String?) -> Bool {
        guard let authority, let named = Self.split(authority), named.port == listening.port else { return false }
        return names().contains(named.host)
    }

    /// An Origin header names this server when it is http and names the host the request did.
    func accepts(origin: String, authority: String?) -> Bool {
        guard origin.lowercased().hasPrefix("http://"), let authority,
              let given = Self.split(String(origin.dropFirst("http://".count))), let named = Self.split(authority)
        else { return false }
        return given.host == named.host && given.port == named.port
    }

    private func names() -> Set<String> {
        boundNames().union(allowed.map { Self.bracketed($0.lowercased()) })
    }

    private func boundNames() -> Set<String> {
        let bound = Self.bracketed(bind.lowercased())
        switch bound {
        case "0.0.0.0", "[::]", "":
            var names = Self.loopbackNames.union(Self.interfaceAddresses())
            if let host = Self.hostName() { names.formUnion([host, host + ".local"]) }
            return names
        case "localhost", "::1", "[::1]": return Self.loopbackNames
        default: return bound.hasPrefix("127.") ? Self.loopbackNames.union([bound]) : [bound]
        }
    }

    /// Host and port, lowercased, the port 80 when none is given; nil for anything that is not
    /// a plain authority (user info, a path, spaces, an empty name).
    static func split(_ authority: String) -> (host: String, port: Int)? {
        let text = authority.lowercased()
        let host: Substring
        let rest: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            rest = text[text.index(after: close)...]
        } else {
            host = text.prefix { $0 != ":" }
            rest = text.dropFirst(host.count)
        }
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-[]:")
        guard !host.isEmpty, host.unicodeScalars.allSatisfy(allowed.contains) else { return nil }
        if rest.isEmpty { return (String(host), 80) }
        guard rest.first == ":", let port = Int(rest.dropFirst()), (1...65535).contains(port), rest.count <= 6 else { return nil }
        return (String(host), port)
    }

    static func bracketed(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[" + host + "]" : host
    }

    static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        return name.isEmpty ? nil : name
    }

    /// The addresses of this machine's interfaces, as a Host header writes them (v6 in brackets,
    /// without a zone).
    static func interfaceAddresses() -> Set<String> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: Set<String> = []
        for interface in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = interface.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            found.insert(bracketed(String(name.prefix { $0 != "%" }).lowercased()))
        }
        return found
    }
}
