import AWSSigV4
import FileSystem
import Foundation

/// Credentials and region from where the AWS tools keep them: the environment, then the shared
/// credentials and config files for a profile. Never from the command line, where `ps` shows it.
public struct AWSConfiguration: Sendable, Equatable {
    public var credentials: AWSCredentials
    public var region: String

    public init(credentials: AWSCredentials, region: String) {
        self.credentials = credentials
        self.region = region
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case noCredentials(profile: String, searched: [String])
        case unreadable(path: String, reason: String)

        public var description: String {
            switch self {
            case .noCredentials(let profile, let searched):
                return "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give profile [\(profile)] aws_access_key_id and aws_secret_access_key in \(searched.joined(separator: " or "))"
            case .unreadable(let path, let reason):
                return "\(path): \(reason)"
            }
        }
    }

    /// `profile` nil: AWS_PROFILE, else `default`; the environment wins only without an explicit profile.
    public static func resolve(profile: String?, region explicitRegion: String?, environment: [String: String]) throws(Failure) -> AWSConfiguration {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let credentialsPath = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        let configPath = environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config"
        let name = profile ?? environment["AWS_PROFILE"] ?? "default"
        let credentialsFile = try readINI(credentialsPath)
        let configFile = try readINI(configPath)
        // The config file names profiles `[profile NAME]`, except `[default]`.
        let fromCredentials = credentialsFile[name] ?? [:]
        let fromConfig = configFile[name == "default" ? "default" : "profile \(name)"] ?? configFile[name] ?? [:]
        let profileValues = fromConfig.merging(fromCredentials) { _, credential in credential }

        let credentials: AWSCredentials
        if profile == nil, let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        } else if let key = profileValues["aws_access_key_id"], let secret = profileValues["aws_secret_access_key"] {
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: profileValues["aws_session_token"])
        } else {
            throw .noCredentials(profile: name, searched: ["the environment", credentialsPath, configPath])
        }
        let region = explicitRegion ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? profileValues["region"] ?? "us-east-1"
        return AWSConfiguration(credentials: credentials, region: region)
    }

    /// `[section]` → key → value; `#` and `;` start comments. A missing file is empty.
    static func readINI(_ path: String) throws(Failure) -> [String: [String: String]] {
        let read: [UInt8]?
        do {
            read = try WholeFile.read(path, atMost: 1 << 20)
        } catch {
            throw .unreadable(path: path, reason: error.reason ?? "\(error)")
        }
        guard let data = read else { return [:] }
        var sections: [String: [String: String]] = [:]
        var current: String?
        for raw in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let section = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[section, default: [:]][key] = value
        }
        return sections
    }
}
