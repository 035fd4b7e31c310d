import AWSSigV4
import Crypto
import FileSystem
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An S3 bucket (AWS, or an S3-compatible service through `endpoint`), under a key prefix.
/// Every request is signed with SigV4 over its real payload hash, so the server checks the
/// bytes it stores; each object carries its sha256 as `x-amz-meta-sha256` for the next publish.
public struct S3Store: ObjectStore {
    public struct Configuration: Sendable {
        public var bucket: String
        public var prefix: String
        public var region: String
        public var credentials: AWSCredentials
        /// `http(s)://host[:port]` of an S3-compatible service; nil for AWS.
        public var endpoint: URL?
        /// `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO, moto, most local services).
        public var pathStyle: Bool
        /// Files larger than this go up in parts.
        public var multipartThreshold: UInt64
        /// Every part but the last (S3's minimum is 5 MiB).
        public var partSize: UInt64
        /// Tries per request on 5xx, throttling and network failures.
        public var attempts: Int
        public var initialBackoff: Double

        public init(
            bucket: String, prefix: String, region: String, credentials: AWSCredentials, endpoint: URL? = nil, pathStyle: Bool = false,
            multipartThreshold: UInt64 = 8 << 20, partSize: UInt64 = 8 << 20, attempts: Int = 5, initialBackoff: Double = 0.25
        ) {
            self.bucket = bucket
            self.prefix = prefix.split(separator: "/").joined(separator: "/")
            self.region = region
            self.credentials = credentials
            self.endpoint = endpoint
            self.pathStyle = pathStyle
            self.multipartThreshold = multipartThreshold
            self.partSize = max(partSize, 5 << 20)
            self.attempts = max(attempts, 1)
            self.initialBackoff = initialBackoff
        }
    }

    public let configuration: Configuration
    private let signer: SigV4Signer
    private let session: URLSession

    public var location: String { "s3://\(configuration.bucket)" + (configuration.prefix.isEmpty ? "" : "/" + configuration.prefix) }

    public init(configuration: Configuration) {
        self.configuration = configuration
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region, service: "s3")
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.timeoutIntervalForRequest = 120
        session = URLSession(configuration: sessionConfiguration)
    }

    // MARK: ObjectStore

    public func head(_ key: String) async throws(StoreError) -> StoredObject? {
        let response = try await send("HEAD", key: key, operation: "HEAD \(key)", acceptNotFound: true)
        if response.status == 404 { return nil }
        let size = response.header("content-length").flatMap { UInt64($0) } ?? 0
        return StoredObject(size: size, sha256: response.header("x-amz-meta-sha256"))
    }

    public func get(_ key: String) async throws(StoreError) -> Data? {
        let response = try await send("GET", key: key, operation: "GET \(key)", acceptNotFound: true)
        return response.status == 404 ? nil : response.body
    }

    public func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
        if metadata.size > configuration.multipartThreshold {
            try await putInParts(key, file: file, metadata: metadata)
            return
        }
        // Read from the file opened, not from what its name is now, and sent from memory: at
        // most the threshold (8 MiB by default) per upload in flight. URLSession's upload from a
        // file on Linux (FoundationNetworking) intermittently never delivers the answer the
        // server sent, and each such request waited out its 120 s timeout (4 or 5 of 633
        // uploads of the demo course, every publish to a local moto_server). The payload hash
        // signed is the manifest's, so S3 refuses other bytes.
        try await put(key, data: Self.read(file, at: 0, count: Int(metadata.size)), metadata: metadata)
    }

    public func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
        _ = try await send("PUT", key: key, headers: Self.objectHeaders(metadata), body: .data(data), payloadHash: metadata.sha256, operation: "PUT \(key)")
    }

    /// CopyObject, with the metadata given again (REPLACE) so the copy carries it whatever the source has.
    /// S3 copies up to 5 GiB in one request; larger objects are uploaded again from `file`.
    public func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
        let sourceKey = configuration.prefix.isEmpty ? source : configuration.prefix + "/" + source
        let headers = Self.objectHeaders(metadata) + [
            ("x-amz-copy-source", "/" + configuration.bucket + "/" + SigV4Signer.percentEncode(sourceKey, keepingSlash: true)),
            ("x-amz-metadata-directive", "REPLACE"),
        ]
        let answer = try await send("PUT", key: key, headers: headers, operation: "copy \(source) to \(key)")
        // S3 may answer 200 and still report the failure in the body.
        if let code = Self.xmlValue("Code", in: answer.body) {
            throw .http(location: location, operation: "copy \(source) to \(key)", status: answer.status, code: code, message: Self.xmlValue("Message", in: answer.body) ?? "")
        }
    }

    public static let largestCopy: UInt64 = 5 << 30

    public func delete(_ key: String) async throws(StoreError) {
        _ = try await send("DELETE", key: key, operation: "DELETE \(key)", acceptNotFound: true)
    }

    // MARK: Multipart

    private func putInParts(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
        let started = try await send(
            "POST", key: key, query: [("uploads", "")], headers: Self.objectHeaders(metadata), operation: "start multipart upload of \(key)")
        guard let uploadID = Self.xmlValue("UploadId", in: started.body) else {
            throw .http(location: location, operation: "start multipart upload of \(key)", status: started.status, code: "", message: "no UploadId in the answer")
        }
        do {
            var parts: [String] = []
            var offset: UInt64 = 0
            var number = 1
            while offset < metadata.size {
                // One part in memory at a time: memory stays bounded whatever the file's size.
                let length = Int(min(configuration.partSize, metadata.size - offset))
                let chunk = try Self.read(file, at: offset, count: length)
                let hash = SHA256Hex.of(chunk)
                let answer = try await send(
                    "PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], body: .data(chunk), payloadHash: hash,
                    operation: "upload part \(number) of \(key)")
                parts.append(answer.header("etag") ?? "")
                offset += UInt64(length)
                number += 1
            }
            let list = parts.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\($0.element)</ETag></Part>" }.joined()
            let body = Data("<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>".utf8)
            let completed = try await send(
                "POST", key: key, query: [("uploadId", uploadID)], headers: [("content-type", "application/xml")], body: .data(body),
                payloadHash: SHA256Hex.of(body), operation: "complete multipart upload of \(key)")
            // S3 may answer 200 and still report the failure in the body.
            if let code = Self.xmlValue("Code", in: completed.body) {
                throw StoreError.http(location: location, operation: "complete multipart upload of \(key)", status: completed.status, code: code, message: Self.xmlValue("Message", in: completed.body) ?? "")
            }
        } catch {
            _ = try? await send("DELETE", key: key, query: [("uploadId", uploadID)], operation: "abort multipart upload of \(key)", acceptNotFound: true)
            throw error as? StoreError ?? .file(path: file.path, reason: "\(error)")
        }
    }

    private static func read(_ file: OpenedFile, at offset: UInt64, count: Int) throws(StoreError) -> Data {
        var chunk = Data(count: count)
        var done = 0
        var failure: FileError?
        while done < count, failure == nil {
            let read = chunk.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Int in
                do throws(FileError) {
                    return try file.read(at: offset + UInt64(done), into: UnsafeMutableRawBufferPointer(rebasing: raw[done..<raw.count]))
                } catch {
                    failure = error
                    return 0
                }
            }
            if read == 0 { break }
            done += read
        }
        if let failure { throw .file(path: failure.path, reason: "cannot be read: \(String(cString: strerror(failure.errno)))") }
        guard done == count else { throw .file(path: file.path, reason: "changed while it was uploaded") }
        return chunk
    }

    // MARK: Requests

    enum Body {
        case none
        case data(Data)
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data

        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    static func objectHeaders(_ metadata: ObjectMetadata) -> [(name: String, value: String)] {
        [("content-type", metadata.contentType), ("cache-control", metadata.cacheControl), ("x-amz-meta-sha256", metadata.sha256)]
    }

    /// An endpoint given by IP address (or `localhost`) has no DNS under which `bucket.host`
    /// could resolve: the bucket goes in the path, as the AWS CLI does on its own there.
    public static func cannotNameABucket(_ host: String?) -> Bool {
        guard let host = host?.lowercased() else { return false }
        if host == "localhost" || host.contains(":") { return true }  // IPv6 literals hold colons
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Host and path of `key` (nil: the bucket itself) in this store's addressing style.
    func address(of key: String?) -> (scheme: String, host: String, path: String) {
        let objectKey = key.map { configuration.prefix.isEmpty ? $0 : configuration.prefix + "/" + $0 }
        let scheme = configuration.endpoint?.scheme ?? "https"
        var host = configuration.endpoint?.host ?? (configuration.region == "us-east-1" ? "s3.amazonaws.com" : "s3.\(configuration.region).amazonaws.com")
        if let port = configuration.endpoint?.port { host += ":\(port)" }
        if configuration.pathStyle || Self.cannotNameABucket(configuration.endpoint?.host) {
            return (scheme, host, "/\(configuration.bucket)/" + (objectKey ?? ""))
        }
        return (scheme, "\(configuration.bucket).\(host)", "/" + (objectKey ?? ""))
    }

    func send(
        _ method: String, key: String?, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
        body: Body = .none, payloadHash: String = SigV4Signer.emptyPayloadHash, operation: String, acceptNotFound: Bool = false
    ) async throws(StoreError) -> Response {
        let (scheme, host, path) = address(of: key)
        let queryString = SigV4Signer.canonicalQuery(query)
        guard let url = URL(string: "\(scheme)://\(host)\(SigV4Signer.encodedPath(path))" + (queryString.isEmpty ? "" : "?" + queryString)) else {
            throw .http(location: location, operation: operation, status: 0, code: "", message: "cannot form a URL for \(path)")
        }
        var lastError = StoreError.unreachable(location: location, operation: operation, reason: "no attempt made")
        for attempt in 0..<configuration.attempts {
            if attempt > 0 {
                let delay = configuration.initialBackoff * pow(2, Double(attempt - 1)) * Double.random(in: 0.75...1.25)
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            }
            // Signed anew for each attempt: the signature carries the time.
            var request = signedRequest(
                method, url: url, host: host, path: path, query: query, headers: headers, payloadHash: payloadHash)
            switch await exchange(&request, body: body, operation: operation) {
            case .failure(let error):
                lastError = error
            case .success(let response):
                guard let transient = try refusal(of: response, operation: operation, acceptNotFound: acceptNotFound) else {
                    return response
                }
                lastError = transient
            }
        }
        throw lastError
    }

    private func signedRequest(
        _ method: String, url: URL, host: String, path: String, query: [(name: String, value: String)],
        headers: [(name: String, value: String)], payloadHash: String
    ) -> URLRequest {
        var signedHeaders = headers
        signedHeaders.append(("host", host))
        signedHeaders.append(("x-amz-content-sha256", payloadHash))
        let signature = signer.sign(SignableRequest(method: method, path: path, query: query, headers: signedHeaders, payloadHash: payloadHash), at: Date())
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in signedHeaders + signature.headersToAdd where name != "host" {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    /// One attempt: the server's answer, or why none came (worth another try).
    private func exchange(_ request: inout URLRequest, body: Body, operation: String) async -> Result<Response, StoreError> {
        do {
            let (data, urlResponse): (Data, URLResponse)
            switch body {
            case .none:
                (data, urlResponse) = try await session.data(for: request)
            case .data(let bytes):
                request.setValue(String(bytes.count), forHTTPHeaderField: "Content-Length")
                (data, urlResponse) = try await session.upload(for: request, from: bytes)
            }
            guard let http = urlResponse as? HTTPURLResponse else {
                return .failure(.unreachable(location: location, operation: operation, reason: "not an HTTP answer"))
            }
            var fields: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
            }
            return .success(Response(status: http.statusCode, headers: fields, body: data))
        } catch {
            return .failure(.unreachable(location: location, operation: operation, reason: error.localizedDescription))
        }
    }

    /// Nil when `response` answers the request; the error to try again on when the refusal is
    /// transient; thrown when another try would be refused the same way.
    private func refusal(of response: Response, operation: String, acceptNotFound: Bool) throws(StoreError) -> StoreError? {
        if (200..<300).contains(response.status) { return nil }
        let code = Self.xmlValue("Code", in: response.body) ?? ""
        let message = Self.xmlValue("Message", in: response.body) ?? ""
        if response.status == 404, code == "NoSuchBucket" { throw .noSuchBucket(bucket: configuration.bucket) }
        if response.status == 404, acceptNotFound { return nil }
        if Self.isTransient(status: response.status, code: code) {
            return .http(location: location, operation: operation, status: response.status, code: code, message: message)
        }
        if response.status == 403 || ["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken", "InvalidToken"].contains(code) {
            throw .denied(location: location, operation: operation, code: code.isEmpty ? "HTTP \(response.status)" : code, message: message)
        }
        throw .http(location: location, operation: operation, status: response.status, code: code, message: message)
    }

    /// 5xx, throttling and request timeouts are worth another try; the rest will not change.
    static func isTransient(status: Int, code: String) -> Bool {
        status >= 500 || status == 429 || ["SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed"].contains(code)
    }

    /// The text of the first `<name>…</name>` in an S3 XML answer.
    static func xmlValue(_ name: String, in data: Data) -> String? {
        let text = String(decoding: data, as: UTF8.self)
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }
}
