import AWSSigV4
import Foundation
import Testing

/// Cases of AWS's published Signature Version 4 test suite (aws-sig-v4-test-suite, as
/// awslabs/aws-c-auth carries it) and of the S3 documentation's signing examples: the
/// canonical request, string to sign and signature each case states.
struct SigV4SuiteTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var method: String
        var path: String
        var query: [(name: String, value: String)] = []
        var headers: [(name: String, value: String)] = []
        var sessionToken: String?
        var payloadHash = SigV4Signer.emptyPayloadHash
        var canonicalRequest: String?
        var stringToSign: String?
        var signature: String
        var description: String { name }
    }

    static let suiteCredentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let host = ("host", "example.amazonaws.com")

    static let suite: [Case] = [
        Case(
            name: "get-vanilla", method: "GET", path: "/",
            canonicalRequest: "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
            signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        Case(
            name: "get-vanilla-query-order-key-case", method: "GET", path: "/", query: [("Param2", "value2"), ("Param1", "value1")],
            canonicalRequest: "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
            signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        Case(
            name: "get-vanilla-query-order-encoded", method: "GET", path: "/", query: [("Param-3", "Value3"), ("Param", "Value2"), ("ሴ", "Value1")],
            canonicalRequest: "GET\n/\n%E1%88%B4=Value1&Param=Value2&Param-3=Value3\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            signature: "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac"),
        Case(name: "get-vanilla-utf8-query", method: "GET", path: "/", query: [("ሴ", "bar")], signature: "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"),
        Case(
            name: "get-utf8", method: "GET", path: "/ሴ",
            canonicalRequest: "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            signature: "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
        Case(name: "get-unreserved", method: "GET", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", signature: "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"),
        Case(name: "get-space-unnormalized", method: "GET", path: "/example space/", signature: "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"),
        Case(name: "get-slashes-unnormalized", method: "GET", path: "//example//", signature: "87cca117541a147f6df867677d98a7d80dff226d2bfca9e4ffa899665623c7e5"),
        Case(name: "get-relative-unnormalized", method: "GET", path: "/example/..", signature: "eca7ead57bb5aa5c8e28007acd4ff04e1ff9a0ff3b237ec1554a184887ff9282"),
        Case(
            name: "get-header-key-duplicate", method: "GET", path: "/", headers: [("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")],
            signature: "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"),
        Case(
            name: "get-header-value-trim", method: "GET", path: "/", headers: [("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")],
            canonicalRequest: "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            signature: "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"),
        Case(name: "post-vanilla-query", method: "POST", path: "/", query: [("Param1", "value1")], signature: "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"),
        Case(name: "post-header-value-case", method: "POST", path: "/", headers: [("My-Header1", "VALUE1")], signature: "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"),
        Case(
            name: "post-x-www-form-urlencoded", method: "POST", path: "/",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Content-Length", "13"), ("x-amz-content-sha256", "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e")],
            payloadHash: "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
            canonicalRequest: "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\nx-amz-date:20150830T123600Z\n\ncontent-length;content-type;host;x-amz-content-sha256;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
            stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nb1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb",
            signature: "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"),
        Case(
            name: "get-vanilla-with-session-token", method: "GET", path: "/", sessionToken: "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267",
            canonicalRequest: "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\nx-amz-security-token:6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267\n\nhost;x-amz-date;x-amz-security-token\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n067b36aa60031588cea4a4cde1f21215227a047690c72247f1d70b32fbbfad2b",
            signature: "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"),
    ]

    @Test(arguments: suite)
    func signsAsTheSuiteStates(_ vector: Case) {
        var credentials = Self.suiteCredentials
        credentials.sessionToken = vector.sessionToken
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: "service")
        let signed = signer.sign(
            SignableRequest(method: vector.method, path: vector.path, query: vector.query, headers: [Self.host] + vector.headers, payloadHash: vector.payloadHash),
            at: Self.suiteDate)
        if let canonical = vector.canonicalRequest { #expect(signed.canonicalRequest == canonical) }
        if let stringToSign = vector.stringToSign { #expect(signed.stringToSign == stringToSign) }
        #expect(signed.signature == vector.signature)
        let signedHeaders = signed.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false).dropLast().last.map(String.init) ?? ""
        #expect(signed.authorization == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=\(signedHeaders), Signature=\(vector.signature)")
        #expect(signed.headersToAdd.first { $0.name == "x-amz-date" }?.value == "20150830T123600Z")
        #expect(signed.headersToAdd.contains { $0.name == "x-amz-security-token" } == (vector.sessionToken != nil))
    }

    // The S3 documentation's examples ("Signature Calculations for the Authorization Header:
    // Transferring Payload in a Single Chunk"): service s3, the example bucket and key.
    static let s3Credentials = AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    func s3Signature(_ method: String, _ path: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)], payload: String) -> SignedRequest {
        let signer = SigV4Signer(credentials: Self.s3Credentials, region: "us-east-1", service: "s3")
        let all = [("host", "examplebucket.s3.amazonaws.com"), ("x-amz-content-sha256", payload)] + headers
        return signer.sign(SignableRequest(method: method, path: path, query: query, headers: all, payloadHash: payload), at: Self.s3Date)
    }

    @Test func s3DocumentationGetObject() {
        let signed = s3Signature("GET", "/test.txt", headers: [("Range", "bytes=0-9")], payload: SigV4Signer.emptyPayloadHash)
        #expect(signed.stringToSign.hasSuffix("7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972"))
        #expect(signed.authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func s3DocumentationPutObjectEncodesTheKeyOnce() {
        // Key "test$file.text": `$` is sent and signed as %24.
        let signed = s3Signature(
            "PUT", "/test$file.text", headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            payload: "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        #expect(signed.canonicalRequest.hasPrefix("PUT\n/test%24file.text\n"))
        #expect(signed.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test func s3DocumentationBucketQueries() {
        #expect(s3Signature("GET", "/", query: [("lifecycle", "")], headers: [], payload: SigV4Signer.emptyPayloadHash).signature == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        #expect(s3Signature("GET", "/", query: [("prefix", "J"), ("max-keys", "2")], headers: [], payload: SigV4Signer.emptyPayloadHash).signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func unsignedPayloadIsSignedAsTheLiteral() {
        let signed = s3Signature("PUT", "/test.txt", headers: [], payload: SigV4Signer.unsignedPayload)
        #expect(signed.canonicalRequest.hasSuffix("\nhost;x-amz-content-sha256;x-amz-date\nUNSIGNED-PAYLOAD"))
        #expect(signed.canonicalRequest.contains("x-amz-content-sha256:UNSIGNED-PAYLOAD\n"))
    }
}
