import Diagnostics

/// Everything that can go wrong writing or reading an archive, with the file and the reason.
public enum ZipError: Error, Equatable, CustomStringConvertible {
    case invalidEntryName(String, reason: String)
    case duplicateEntry(String)
    case io(path: String, operation: String, errno: Int32)
    case zlib(operation: String, code: Int32)
    case malformed(path: String, reason: String)
    case crcMismatch(path: String, entry: String)
    case limitExceeded(path: String, reason: String)
    case unsafeEntry(path: String, entry: String, reason: String)

    /// An entry name as it may be printed: an archive's names are its author's, and a control
    /// character in one could forge a line or drive the terminal.
    static func shown(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            if EntryName.isControl(scalar) { out += "\\u{" + String(scalar.value, radix: 16) + "}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    public var description: String {
        switch self {
        case .invalidEntryName(let name, let reason):
            return "invalid archive entry name \"\(Self.shown(name))\": \(reason)"
        case .duplicateEntry(let name):
            return "duplicate archive entry \"\(Self.shown(name))\""
        case .io(let path, let operation, let code):
            return "\(path): \(operation) failed: \(String(cString: strerror(code)))"
        case .zlib(let operation, let code):
            return "zlib \(operation) failed with code \(code)"
        case .malformed(let path, let reason):
            return "\(path): not a valid ZIP archive: \(reason)"
        case .crcMismatch(let path, let entry):
            return "\(path): entry \"\(Self.shown(entry))\" fails its CRC-32 check"
        case .limitExceeded(let path, let reason):
            return "\(path): refused: \(reason)"
        case .unsafeEntry(let path, let entry, let reason):
            return "\(path): unsafe entry \"\(Self.shown(entry))\": \(reason)"
        }
    }
}

import FileSystem

extension ZipError {
    init(_ error: FileError) {
        self = .io(path: error.path, operation: error.operation, errno: error.errno)
    }

    /// Runs `body`, reporting a failed file call as this module's error.
    static func mapping<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FileError {
            throw ZipError(error)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ZipError {
    /// Whether the entries themselves were refused (their names, their number, their sizes):
    /// the same entries are refused again, whereas a failed file call or zlib call may pass on
    /// another try. Thrown while reading, it is the archive read that is at fault.
    public var refusesTheEntries: Bool {
        switch self {
        case .invalidEntryName, .duplicateEntry, .limitExceeded, .unsafeEntry: true
        case .io, .zlib, .malformed, .crcMismatch: false
        }
    }
}

extension ZipError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .invalidEntryName, .duplicateEntry: .entryNameInvalid
        case .io: .fileCallFailed
        case .zlib: .compressionFailed
        case .malformed, .crcMismatch: .archiveMalformed
        case .limitExceeded, .unsafeEntry: .archiveRefused
        }
    }
}
