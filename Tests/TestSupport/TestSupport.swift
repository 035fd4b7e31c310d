import Foundation

/// Paths, temporary folders, file trees and external tools for tests that use the real thing.
public enum TestSupport {
    /// The package root, found from this file's location.
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    public static var demoCourse: String { packageRoot + "/../shared/corpus/openedx-demo-course/course" }
    public static var exampleCourse: String { packageRoot + "/examples/coursepack-101" }

    /// True in CI, where a missing tool or corpus is a failure, never a skip.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// A build clock (`BuildOptions.now`: nanoseconds since 1970) running a minute ahead of the
    /// real one, so files a test has just written count as settled. A build trusts a file's
    /// stamp only once it is older than `TreeStamp.settleMargin` (2 s); without this, tests
    /// slept that long.
    public static let clockAhead: @Sendable () -> Int64 = {
        Int64(Date().timeIntervalSince1970 * 1e9) + 60_000_000_000
    }

    /// A fresh folder under the system temporary folder, removed when the test process exits
    /// (`COURSEPACK_KEEP_TEST_FILES=1` keeps them to look at). Kept, a full run left gigabytes
    /// in /tmp each time: a developer's disk filled up within a few days of `make test`.
    public static func temporaryFolder(_ label: String = "test") -> String {
        var template = Array((NSTemporaryDirectory() + "/coursepack-\(label)-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        let path = String(cString: made)
        TemporaryFolders.shared.add(path)
        return path
    }

    /// Writes `files` (relative path → text) under `root`, creating folders.
    public static func write(_ files: [String: String], under root: String) throws {
        for (path, text) in files {
            try writeBytes(Array(text.utf8), to: root + "/" + path)
        }
    }

    /// Leaves a published folder as builders before the split manifest wrote it: no
    /// `manifest-index.json`, no `manifest/` parts, so a client reads `manifest.json` (the path
    /// tests of a hostile or damaged manifest.json aim at).
    public static func removeSplitManifest(_ published: String) throws {
        for name in ["manifest-index.json", "manifest"] where FileManager.default.fileExists(atPath: published + "/" + name) {
            try FileManager.default.removeItem(atPath: published + "/" + name)
        }
    }

    public static func writeBytes(_ bytes: [UInt8], to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    public static func read(_ path: String) -> [UInt8] {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
    }

    public struct ProcessResult: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs a program to completion, capturing its output.
    /// No program a test runs may take longer: one that hangs (a FIFO opened for reading once
    /// hung the whole suite until CI's limit) is killed, and its result says so.
    public static let runTimeLimit: TimeInterval = 900

    public static func run(_ executable: String, _ arguments: [String], in directory: String? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let killed = LockedData()
        let watchdog = DispatchWorkItem {
            killed.set(Data("\n[test harness: \(executable) killed after \(Int(runTimeLimit)) s]\n".utf8))
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + runTimeLimit, execute: watchdog)
        // Drain both pipes concurrently so a chatty child cannot block on a full pipe.
        let errData = LockedData()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        watchdog.cancel()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.get() + killed.get(), as: UTF8.self))
    }

    /// The absolute path of a tool on PATH, or nil.
    public static func which(_ tool: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// `unzip -t` and Python's zipfile (`testzip()` plus a full read of every entry) on each archive.
    /// Returns a description of every failure; empty when all pass.
    public static func independentZipCheck(_ archives: [String]) throws -> [String] {
        guard let unzip = which("unzip"), let python = which("python3") else {
            return ["unzip and python3 are required to check archives"]
        }
        var failures: [String] = []
        for archive in archives {
            let result = try run(unzip, ["-tqq", archive])
            if result.status != 0 { failures.append("unzip -t \(archive): \(result.stdout)\(result.stderr)") }
        }
        let script = """
            import sys, zipfile
            bad = []
            for path in sys.argv[1:]:
                try:
                    with zipfile.ZipFile(path) as z:
                        first = z.testzip()
                        if first is not None:
                            bad.append(f"{path}: bad entry {first}")
                        for info in z.infolist():
                            if len(z.read(info)) != info.file_size:
                                bad.append(f"{path}: {info.filename} size differs")
                except Exception as e:
                    bad.append(f"{path}: {e}")
            print("\\n".join(bad))
            """
        var index = 0
        while index < archives.count {
            let batch = Array(archives[index..<min(index + 500, archives.count)])
            let result = try run(python, ["-c", script] + batch)
            let output = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if result.status != 0 { failures.append("python zipfile: \(result.stderr)") }
            if !output.isEmpty { failures.append(output) }
            index += 500
        }
        return failures
    }

    /// Files under `root`, relative, sorted.
    public static func files(under root: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result.append(path)
            }
        }
        return result.sorted()
    }
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}

extension TestSupport {
    /// The `coursepack` binary built beside the test runner.
    public static var coursepackBinary: String {
        let runner = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        let candidates = [
            runner.appendingPathComponent("coursepack").path,
            runner.deletingLastPathComponent().appendingPathComponent("coursepack").path,
            packageRoot + "/.build/debug/coursepack",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[2]
    }

    /// Runs `coursepack` with `arguments`.
    public static func coursepack(_ arguments: [String]) throws -> ProcessResult {
        try run(coursepackBinary, arguments)
    }

    /// Copies a folder tree (to change a course without touching the original).
    public static func copy(_ source: String, to destination: String) throws {
        try? FileManager.default.removeItem(atPath: destination)
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }
}

/// A long-running helper a test starts (a server): stopped and reaped when the test is done,
/// so no process outlives the test that started it. `stop()` says whether it is really gone.
public final class ChildProcess: @unchecked Sendable {
    public let process: Process
    public var pid: Int32 { process.processIdentifier }

    public init(_ executable: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// SIGTERM, then SIGKILL if it is still there after 5 s; waits for it, and for the
    /// processes it started (`descendants` taken before), to be gone. True when none is left.
    @discardableResult
    public func stop() -> Bool {
        let children = TestSupport.descendants(of: pid)
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(pid, SIGKILL) }
        }
        process.waitUntilExit()
        let deadline = Date().addingTimeInterval(5)
        while children.contains(where: TestSupport.isAlive) && Date() < deadline { usleep(20_000) }
        return !TestSupport.isAlive(pid) && !children.contains(where: TestSupport.isAlive)
    }

    deinit { stop() }
}

extension TestSupport {
    /// Whether a process with this id exists and is not a zombie.
    public static func isAlive(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return kill(pid, 0) == 0 }
        // The state follows the command name in parentheses: Z is a zombie, X dead.
        guard let close = status.lastIndex(of: ")") else { return true }
        let state = status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Ids of the processes below `pid` (children, their children...), from /proc.
    public static func descendants(of pid: Int32) -> [Int32] {
        var parents: [Int32: Int32] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[child] = parent }
        }
        var found: [Int32] = []
        var frontier = [pid]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }
}

/// A real nginx serving a folder on a free loopback port, with its access log, for sync tests.
public final class NginxServer: @unchecked Sendable {
    public let port: Int
    public let root: String
    public let folder: String
    private let process: ChildProcess

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var accessLog: String { folder + "/access.log" }

    /// Nil when nginx is not installed (callers record a failure under CI, never a pass).
    /// `locations` goes into the server block as it is (e.g. a single-page app's fallback).
    public init?(serving root: String, locations: String = "") throws {
        guard let nginx = TestSupport.which("nginx") ?? ["/usr/sbin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        self.root = root
        folder = TestSupport.temporaryFolder("nginx")
        let python = TestSupport.which("python3") ?? "/usr/bin/python3"
        let probe = try TestSupport.run(python, ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        port = Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let config = """
            user root;
            worker_processes 1;
            error_log \(folder)/error.log;
            pid \(folder)/nginx.pid;
            events { worker_connections 64; }
            http {
                log_format plain '$request_method $uri $status $body_bytes_sent "$http_range"';
                access_log \(folder)/access.log plain;
                client_body_temp_path \(folder)/body; proxy_temp_path \(folder)/proxy;
                fastcgi_temp_path \(folder)/fastcgi; uwsgi_temp_path \(folder)/uwsgi; scgi_temp_path \(folder)/scgi;
                types { application/json json; application/zip zip; }
                server {
                    listen 127.0.0.1:\(port);
                    root \(root);
                    \(locations)
                }
            }
            """
        try TestSupport.write(["nginx.conf": config], under: folder)
        process = try ChildProcess(nginx, ["-c", folder + "/nginx.conf", "-p", folder, "-g", "daemon off;"])
        // Ready when the port accepts connections.
        for _ in 0..<100 {
            let check = try TestSupport.run(python, ["-c", "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', \(port))))"])
            if check.status == 0 { return }
            usleep(50_000)
        }
    }

    /// Access log lines (`METHOD URI STATUS BYTES "RANGE"`) written so far.
    public func requests() -> [String] {
        usleep(100_000)
        return String(decoding: TestSupport.read(accessLog), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    public func clearLog() {
        try? Data().write(to: URL(fileURLWithPath: accessLog))
        // nginx keeps appending to its open descriptor; truncation is enough.
    }

    /// Stops nginx and its workers; true when none of them is left.
    @discardableResult
    public func stop() -> Bool { process.stop() }
}

extension TestSupport {
    /// Every entry of every archive in `out` (`out/<type>/<name>.zip`), as one text.
    public static func allArchiveText(_ out: String) throws -> String {
        let script = """
            import glob, os, sys, zipfile
            for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.zip"))):
                with zipfile.ZipFile(path) as z:
                    for name in z.namelist():
                        sys.stdout.write(z.read(name).decode("utf-8", "replace"))
            """
        return try run(which("python3") ?? "/usr/bin/python3", ["-c", script, out]).stdout
    }
}

extension TestSupport {
    /// Writes a .tar.gz with Python's tarfile (an independent writer) from a list of members.
    public static func makeTarball(_ members: [(name: String, kind: String, data: String)], to path: String) throws {
        let spec = members.map { "\($0.kind)\t\($0.name)\t\($0.data)" }.joined(separator: "\n")
        let script = """
            import io, sys, tarfile
            with tarfile.open(sys.argv[1], "w:gz", format=tarfile.GNU_FORMAT) as tar:
                for line in sys.stdin.read().split("\\n"):
                    kind, name, data = line.split("\\t")
                    info = tarfile.TarInfo(name)
                    if kind == "file":
                        payload = data.encode()
                        info.size = len(payload)
                        tar.addfile(info, io.BytesIO(payload))
                    elif kind == "dir":
                        info.type = tarfile.DIRTYPE
                        tar.addfile(info)
                    elif kind == "symlink":
                        info.type = tarfile.SYMTYPE
                        info.linkname = data
                        tar.addfile(info)
                    elif kind == "hardlink":
                        info.type = tarfile.LNKTYPE
                        info.linkname = data
                        tar.addfile(info)
            """
        let input = temporaryFolder("spec") + "/spec.txt"
        try write(["spec.txt": spec], under: (input as NSString).deletingLastPathComponent)
        let python = which("python3") ?? "/usr/bin/python3"
        let result = try run("/bin/sh", ["-c", "\"$0\" -c \"$1\" \"$2\" < \"$3\"", python, script, path, input])
        if result.status != 0 { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: result.stderr]) }
    }
}

/// A seeded generator, so random trees are reproducible from their seed.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
