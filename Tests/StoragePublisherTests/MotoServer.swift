import Foundation
import Testing
import TestSupport

/// A real `moto_server` (PyPI `moto[server]`) on a free loopback port, started by the test and
/// stopped by it, with its request recorder on: the server's own log of what it received, in order.
final class MotoServer: @unchecked Sendable {
    let port: Int
    let folder: String
    let bucket = "courses"
    /// An IAM user's key pair when the server checks signatures; anything otherwise.
    private(set) var accessKey = "unchecked"
    private(set) var secretKey = "unchecked"
    private let process: Process

    var endpoint: String { "http://127.0.0.1:\(port)" }
    var recording: String { folder + "/requests.jsonl" }

    /// With `checkingSignatures`, every request after the setup must carry a valid SigV4
    /// signature of an IAM user (moto answers SignatureDoesNotMatch otherwise); without, the
    /// bucket is also readable anonymously, as a public bucket's HTTP URL is.
    init(checkingSignatures: Bool) throws {
        guard let moto = TestSupport.which("moto_server") else {
            Issue.record("moto_server is not installed: publish tests need it (scripts/ensure-deps.sh --test installs moto[server] with pip)")
            throw CancellationError()
        }
        let python = try #require(TestSupport.which("python3"), "python3 is needed to set moto up")
        folder = TestSupport.temporaryFolder("moto")
        let probe = try TestSupport.run(python, ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        port = Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        process = Process()
        process.executableURL = URL(fileURLWithPath: moto)
        process.arguments = ["-H", "127.0.0.1", "-p", String(port)]
        var environment = ProcessInfo.processInfo.environment
        environment["MOTO_ENABLE_RECORDING"] = "True"
        environment["MOTO_RECORDER_FILEPATH"] = folder + "/requests.jsonl"
        // The four setup calls below go unchecked; every later request is authenticated.
        if checkingSignatures { environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "4" }
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        var ready = false
        for _ in 0..<200 where !ready {
            let check = try TestSupport.run(python, ["-c", "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', \(port))))"])
            ready = check.status == 0
            if !ready { usleep(50_000) }
        }
        try #require(ready, "moto_server did not start on port \(port)")
        let setup = """
            import boto3, json, sys
            ep = sys.argv[1]
            args = dict(endpoint_url=ep, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
            if sys.argv[2] == "auth":
                iam = boto3.client("iam", **args)
                iam.create_user(UserName="publisher")
                iam.put_user_policy(UserName="publisher", PolicyName="s3", PolicyDocument=json.dumps(
                    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
                key = iam.create_access_key(UserName="publisher")["AccessKey"]
                print(key["AccessKeyId"], key["SecretAccessKey"])
            else:
                print("unchecked unchecked")
            s3 = boto3.client("s3", **args)
            s3.create_bucket(Bucket="courses")
            if sys.argv[2] != "auth":
                # A public bucket, as clients download from: anyone may GET its objects.
                s3.put_bucket_policy(Bucket="courses", Policy=json.dumps({"Version": "2012-10-17", "Statement": [
                    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::courses/*"}]}))
            """
        let result = try TestSupport.run(python, ["-c", setup, endpoint, checkingSignatures ? "auth" : "open"])
        try #require(result.status == 0, "moto setup failed (is boto3 installed?): \(result.stderr)")
        let keys = result.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        try #require(keys.count == 2)
        accessKey = keys[0]
        secretKey = keys[1]
        clearLog()
    }

    /// `METHOD /bucket/key?query` of every request since the last `clearLog`, in arrival order;
    /// a server-side copy is `PUT /bucket/key <- /bucket/source`.
    func requests() -> [String] {
        usleep(100_000)
        return String(decoding: TestSupport.read(recording), as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let method = entry["method"] as? String, let url = (entry["url"] as? String).flatMap(URLComponents.init(string:))
            else { return nil }
            let headers = entry["headers"] as? [String: String] ?? [:]
            let copySource = headers.first { $0.key.lowercased() == "x-amz-copy-source" }?.value
            return "\(method) \(url.percentEncodedPath)\(url.percentEncodedQuery.map { "?" + $0 } ?? "")" + (copySource.map { " <- " + $0 } ?? "")
        }
    }

    /// The requests that change the bucket.
    func writes() -> [String] { requests().filter { $0.hasPrefix("PUT ") || $0.hasPrefix("DELETE ") || $0.hasPrefix("POST ") } }

    func clearLog() {
        try? Data().write(to: URL(fileURLWithPath: recording))
    }

    var isRunning: Bool { process.isRunning }

    /// Stops the server and reaps it; the test then checks it is gone.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        // moto_server ignores SIGTERM and SIGINT while it serves: SIGKILL after a moment.
        for _ in 0..<10 where process.isRunning { usleep(100_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
