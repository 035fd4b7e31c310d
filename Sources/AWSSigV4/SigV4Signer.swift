import Crypto
import Foundation

/// An access key pair, and the session token that comes with temporary credentials.
public struct AWSCredentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// What a signature covers. `path` is the decoded path (an S3 key after the bucket): the signer
/// encodes it, so the caller sends `SigV4Signer.encodedPath(path)` on the wire.
public struct SignableRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [(name: String, value: String)]
    /// Including `host`; names in any case, repeated names allowed (their values are joined).
    public var headers: [(name: String, value: String)]
    /// Hex SHA-256 of the body, or `SigV4Signer.unsignedPayload`.
    public var payloadHash: String

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)], payloadHash: String) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.payloadHash = payloadHash
    }
}

/// The signature and the headers to add to the request for it to carry it.
public struct SignedRequest: Sendable {
    public var canonicalRequest: String
    public var stringToSign: String
    public var signature: String
    public var authorization: String
    /// `x-amz-date`, `x-amz-security-token` when there is a session token, and `Authorization`.
    public var headersToAdd: [(name: String, value: String)]
}

/// AWS Signature Version 4 (header form), as S3 expects it: the path is encoded once, segment by
/// segment, and never normalized (an S3 key may hold `//` or `..`).
public struct SigV4Signer: Sendable {
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public var credentials: AWSCredentials
    public var region: String
    public var service: String

    public init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    public func sign(_ request: SignableRequest, at date: Date) -> SignedRequest {
        let (stamp, day) = Self.timestamps(date)
        var headers = request.headers
        headers.append(("x-amz-date", stamp))
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(headers)
        let canonicalRequest = [
            request.method,
            Self.encodedPath(request.path),
            Self.canonicalQuery(request.query),
            canonicalHeaders,
            signedHeaders,
            request.payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", stamp, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        let key = Self.signingKey(secret: credentials.secretAccessKey, day: day, region: region, service: service)
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        var added: [(name: String, value: String)] = [("x-amz-date", stamp)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        added.append(("Authorization", authorization))
        return SignedRequest(
            canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature,
            authorization: authorization, headersToAdd: added)
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request").
    public static func signingKey(secret: String, day: String, region: String, service: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + secret).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// Each byte outside A–Z a–z 0–9 `-._~` percent-encoded (upper-case hex); `/` kept when asked.
    public static func percentEncode(_ text: String, keepingSlash: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                out.append("/")
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// The path as signed and as sent.
    public static func encodedPath(_ path: String) -> String {
        let encoded = percentEncode(path, keepingSlash: true)
        return encoded.hasPrefix("/") ? encoded : "/" + encoded
    }

    /// Names and values encoded, sorted by name then value; the same string goes on the wire.
    public static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { (percentEncode($0.name), percentEncode($0.value)) }
        let sorted = encoded.sorted { left, right in left.name == right.name ? left.value < right.value : left.name < right.name }
        return sorted.map { pair in pair.name + "=" + pair.value }.joined(separator: "&")
    }

    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (String, String) {
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            // Trimmed, and inner runs of spaces folded to one, as the suite's get-header-value-trim says.
            let folded = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            values[name.lowercased(), default: []].append(folded.trimmingCharacters(in: .whitespaces))
        }
        let names = values.keys.sorted()
        let lines = names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }.joined()
        return (lines, names.joined(separator: ";"))
    }

    /// `20150830T123600Z` and `20150830`, in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let day = String(format: "%04d%02d%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
        let stamp = day + String(format: "T%02d%02d%02dZ", Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return (stamp, day)
    }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
