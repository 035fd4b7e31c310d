import AWSSigV4
import Foundation
import StoragePublisher
import Testing
import TestSupport

struct PublishConfigurationTests {
    @Test func credentialsComeFromTheEnvironmentFirst() throws {
        let resolved = try AWSConfiguration.resolve(
            profile: nil, region: nil,
            environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token", "AWS_DEFAULT_REGION": "eu-west-3", "HOME": "/nonexistent"])
        #expect(resolved == AWSConfiguration(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret", sessionToken: "token"), region: "eu-west-3"))
    }

    @Test func aProfileReadsTheSharedCredentialsAndConfigFiles() throws {
        let folder = TestSupport.temporaryFolder("aws-config")
        try TestSupport.write([
            "credentials": "[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = defaultsecret\n\n[minio]\naws_access_key_id=MINIOKEY\naws_secret_access_key = minio secret\n# a comment\n",
            "config": "[default]\nregion = us-west-2\n[profile minio]\nregion = local-1\n",
        ], under: folder)
        let environment = [
            "AWS_SHARED_CREDENTIALS_FILE": folder + "/credentials", "AWS_CONFIG_FILE": folder + "/config",
            // An explicit --profile wins over the environment's keys.
            "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret",
        ]
        let minio = try AWSConfiguration.resolve(profile: "minio", region: nil, environment: environment)
        #expect(minio == AWSConfiguration(credentials: AWSCredentials(accessKeyID: "MINIOKEY", secretAccessKey: "minio secret"), region: "local-1"))
        let fallback = try AWSConfiguration.resolve(profile: nil, region: "ap-south-1", environment: ["AWS_SHARED_CREDENTIALS_FILE": folder + "/credentials", "AWS_CONFIG_FILE": folder + "/config"])
        #expect(fallback == AWSConfiguration(credentials: AWSCredentials(accessKeyID: "DEFAULTKEY", secretAccessKey: "defaultsecret"), region: "ap-south-1"))
        #expect(throws: AWSConfiguration.Failure.self) {
            try AWSConfiguration.resolve(profile: "absent", region: nil, environment: environment)
        }
    }

    @Test func targetsAndFlagValues() throws {
        #expect(try PublishTarget.parse("s3://courses/demo/2026/") == .s3(bucket: "courses", prefix: "demo/2026"))
        #expect(try PublishTarget.parse("s3://courses") == .s3(bucket: "courses", prefix: ""))
        #expect(try PublishTarget.parse("/var/www/courses") == .folder("/var/www/courses"))
        #expect(throws: PublishTarget.Invalid.self) { try PublishTarget.parse("s3://Bad_Bucket/x") }
        #expect(throws: PublishTarget.Invalid.self) { try PublishTarget.parse("s3://courses/a/../b") }
        #expect(throws: PublishTarget.Invalid.self) { try PublishTarget.parse("gs://courses/x") }
        #expect(PublishTarget.duration("24h") == 86400 && PublishTarget.duration("1s") == 1 && PublishTarget.duration("2d") == 172_800 && PublishTarget.duration("soon") == nil)
        // Not a duration: one without end, or too large for a number of seconds.
        #expect(["inf", "infd", "1e400s", "nan", "-1h", "1e308d"].allSatisfy { PublishTarget.duration($0) == nil })
        #expect(PublishTarget.size("64MiB") == 64 << 20 && PublishTarget.size("5MB") == 5_000_000 && PublishTarget.size("12") == 12 && PublishTarget.size("x") == nil)
        // A count whose bytes do not fit 64 bits is no size (it once trapped the program).
        #expect(PublishTarget.size("17179869184GiB") == nil && PublishTarget.size("18446744073709551615KB") == nil)
        #expect(PublishTarget.size("17179869183GiB") == 17_179_869_183 << 30)
    }
}
