import ArgumentParser
import ClientTarget
import CommandLineSupport
import CourseServer
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a synced folder over HTTP (course list and outlines at /, Range requests for video) until interrupted.")

    @OptionGroup var folder: TargetFolder

    @Option(name: .long, help: "TCP port; 0 lets the system choose (printed on start).")
    var port: Int = 8080

    @Option(name: .long, help: "Address to listen on: 127.0.0.1 (this device only), or 0.0.0.0 for the local network.")
    var bind = "127.0.0.1"

    @Option(name: .long, help: "Seconds a connection may stay open without sending a complete request (also the time a request's headers have to arrive in).")
    var idleTimeout = CourseServer.Limits.standard.idleSeconds

    @Option(name: .long, help: "Connections served at once (kept under the open-file limit); more wait until one closes.")
    var maxConnections = CourseServer.Limits.standard.connections

    @Option(name: .long, help: "A host name clients use for this device besides its addresses (repeatable); requests naming any other host are refused.")
    var allowHost: [String] = []

    @Option(name: .long, help: "Learner events one course's journal keeps until they are sent (the oldest are dropped past it, never an answer).")
    var maxEvents = CourseServer.Limits.standard.events.entries

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be 1 to 3600 seconds") }
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be 1 to 1000000") }
        guard (1...1_000_000).contains(maxEvents) else { throw ValidationError("--max-events must be 1 to 1000000") }
    }

    func run() async throws {
        _ = try existingTarget(folder.target)
        let (shown, root) = (bind, folder.target)
        try await orExitBadInput {
            var limits = CourseServer.Limits.standard
            limits.idleSeconds = idleTimeout
            limits.connections = maxConnections
            limits.events.entries = maxEvents
            try await CourseServer(root: root, host: bind, port: port, allowedHosts: allowHost, limits: limits).run { port in
                FileHandle.standardOutput.write(Data("coursepack: serving \(root) at http://\(shown):\(port)/\n".utf8))
            }
        }
    }
}
