import ArgumentParser
import ClientTarget
import CommandLineSupport
import CourseServer
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a synced folder over HTTP (course list and outlines at /, Range requests for video) until interrupted.")

    @Argument(help: "A folder kept by `coursepack sync`.")
    var target: String

    @Option(name: .long, help: "TCP port; 0 lets the system choose (printed on start).")
    var port: Int = 8080

    @Option(name: .long, help: "Address to listen on: 127.0.0.1 (this device only), or 0.0.0.0 for the local network.")
    var bind = "127.0.0.1"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        _ = try existingTarget(target)
        let shown = bind
        try await orExitBadInput {
            try await CourseServer(root: target, host: bind, port: port).run { port in
                FileHandle.standardOutput.write(Data("coursepack: serving \(target) at http://\(shown):\(port)/\n".utf8))
            }
        }
    }
}
