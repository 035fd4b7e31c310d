import FileSystem
import Foundation
import Manifest
import ZipArchive
import ZlibStream

/// The files an installed block folder holds (name, size, CRC-32, from its archive's central
/// directory), kept in the course folder's state so that a later sync or `status --verify` can
/// find a block whose files were deleted, added, truncated or changed, and repair it.
///
/// One inventory per block folder and archive (`<folder>.<sha256 prefix>.tsv`): the one for the
/// archive the local manifest names is always on the disk, whatever moment a sync was stopped
/// at, because a sync writes the new one before it swaps the folder in and removes the old one
/// only after a local manifest names the new archive. A folder swapped in under a manifest that
/// still names the old archive is then compared with the old archive's inventory, and found.
///
/// Format 2: a header line, the archive's sha256, then one line per file with its name
/// percent-encoded (every byte outside printable ASCII, and `%`), so no name can add or split a
/// line. Format 1 (no header, names raw) is still read, for targets synced before.
public struct BlockInventory: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        public var name: String
        public var size: UInt64
        public var crc32: UInt32
    }

    public var files: [File]
    /// SHA-256 of the archive the folder was unpacked from; nil in format 1.
    public var archiveSHA256: String?

    static let header = "coursepack-inventory 2"

    init(entries: [ZipReader.Entry], archiveSHA256: String) {
        files = entries.filter { !$0.isDirectory }.map { File(name: $0.name, size: $0.uncompressedSize, crc32: $0.crc32) }
        self.archiveSHA256 = archiveSHA256
    }

    init(files: [File], archiveSHA256: String?) {
        self.files = files
        self.archiveSHA256 = archiveSHA256
    }

    /// `<course folder>/.coursepack-sync/files/<type>_<name>.<first 16 hex digits of sha256>.tsv`.
    public static func path(stateFolder: String, blockFolder: String, archiveSHA256: String) -> String {
        stateFolder + "/files/" + fileStem(blockFolder) + "." + archiveSHA256.prefix(16) + ".tsv"
    }

    /// Where format 1 kept the one inventory of a folder.
    static func legacyPath(stateFolder: String, blockFolder: String) -> String {
        stateFolder + "/files/" + fileStem(blockFolder) + ".tsv"
    }

    private static func fileStem(_ blockFolder: String) -> String { blockFolder.replacingOccurrences(of: "/", with: "_") }

    /// `synced` false: the sync waits for the whole file system before it swaps the block in.
    func write(to path: String, synced: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: DurableFile.folder(of: path), withIntermediateDirectories: true)
        var text = Self.header + "\n" + "archive\t" + (archiveSHA256 ?? "") + "\n"
        for file in files { text += "\(String(file.crc32, radix: 16))\t\(file.size)\t\(Self.encode(file.name))\n" }
        try DurableFile.replace(path, with: Array(text.utf8), synced: synced)
    }

    /// What the state records about a block folder installed from an archive.
    public enum Recorded: Sendable, Equatable {
        /// No inventory: a block installed before inventories were kept.
        case nothing
        /// An inventory that cannot be read or names another archive: the block's state is unknown.
        case unreadable(String)
        case inventory(BlockInventory)
    }

    public static func recorded(stateFolder: String, blockFolder: String, archiveSHA256: String?) -> Recorded {
        if let archiveSHA256 {
            let path = path(stateFolder: stateFolder, blockFolder: blockFolder, archiveSHA256: archiveSHA256)
            if let data = WholeFile.readIfUsable(path, atMost: WholeFile.stateLimit) {
                guard let inventory = parse(data) else { return .unreadable("its inventory \(path) cannot be read") }
                guard inventory.archiveSHA256 == archiveSHA256 else { return .unreadable("its inventory \(path) names another archive") }
                return .inventory(inventory)
            }
        }
        let legacy = legacyPath(stateFolder: stateFolder, blockFolder: blockFolder)
        guard let data = WholeFile.readIfUsable(legacy, atMost: WholeFile.stateLimit) else { return .nothing }
        guard let inventory = parse(data) else { return .unreadable("its inventory \(legacy) cannot be read") }
        return .inventory(inventory)
    }

    /// The inventory of the folder as installed from `archiveSHA256`, nil when none can be read.
    public static func read(stateFolder: String, blockFolder: String, archiveSHA256: String?) -> BlockInventory? {
        guard case .inventory(let inventory) = recorded(stateFolder: stateFolder, blockFolder: blockFolder, archiveSHA256: archiveSHA256) else { return nil }
        return inventory
    }

    /// What is wrong with the installed `blockFolder` (under `courseRoot`) compared with the
    /// inventory of the archive the local manifest names; nil when it is as installed, or when
    /// nothing records how it was installed (a migrated target).
    public static func damage(
        courseRoot: String, stateFolder: String, blockFolder: String, archiveSHA256: String?, readingBytes: Bool = true
    ) -> String? {
        switch recorded(stateFolder: stateFolder, blockFolder: blockFolder, archiveSHA256: archiveSHA256) {
        case .nothing: return nil
        case .unreadable(let reason): return reason
        case .inventory(let inventory): return inventory.damage(in: courseRoot + "/" + blockFolder, readingBytes: readingBytes)
        }
    }

    /// Removes every inventory of each block folder in `folders` (block folder → the archive
    /// whose inventory stays, nil for none), format 1's too. One listing for them all: a sync
    /// calls it once per batch of swaps.
    public static func removeOthers(stateFolder: String, keeping folders: [String: String?]) {
        guard !folders.isEmpty else { return }
        var kept: [String: Substring?] = [:]
        // updateValue: assigning nil through the subscript would drop the folder instead.
        for (folder, sha) in folders { kept.updateValue(sha.map { $0.prefix(16) }, forKey: fileStem(folder)) }
        let directory = stateFolder + "/files"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".tsv") {
            let base = name.dropLast(4)
            // `<stem>.<16 hex digits>`, read from the right: a stem may hold dots itself.
            let suffix = base.suffix(17)
            let keyed = base.count > 17 && suffix.first == "." && suffix.dropFirst().allSatisfy(\.isHexDigit)
            let stem = keyed ? String(base.dropLast(17)) : String(base)
            guard let keep = kept[stem] else { continue }
            if !keyed || keep.map({ suffix.dropFirst() != $0 }) ?? true { unlink(directory + "/" + name) }
        }
    }

    /// Nil when the bytes are not an inventory of either format.
    static func parse(_ bytes: [UInt8]) -> BlockInventory? {
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.last == "" else { return nil }  // cut short
        lines.removeLast()
        var sha: String?
        var encoded = false
        if lines.first == Substring(header) {
            guard lines.count >= 2, lines[1].hasPrefix("archive\t") else { return nil }
            sha = String(lines[1].dropFirst("archive\t".count))
            lines.removeFirst(2)
            encoded = true
        }
        var files: [File] = []
        for line in lines {
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let crc = UInt32(fields[0], radix: 16), let size = UInt64(fields[1]) else { return nil }
            guard let name = encoded ? decode(fields[2]) : String(fields[2]) else { return nil }
            files.append(File(name: name, size: size, crc32: crc))
        }
        return BlockInventory(files: files, archiveSHA256: sha)
    }

    /// Every byte outside printable ASCII (controls, DEL, and all of UTF-8's multi-byte
    /// sequences, so C1 controls too) and `%` as `%XX`.
    static func encode(_ name: String) -> String {
        var out: [UInt8] = []
        for byte in name.utf8 {
            if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "%") {
                out.append(byte)
            } else {
                out += Array(String(format: "%%%02X", byte).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            out.append(value)
            bytes.removeFirst(2)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// What is wrong with `folder` compared with the inventory, or nil when it holds exactly
    /// the inventory's files, each with its size and CRC-32. `readingBytes`: reads every byte,
    /// so that a same-size edit is found too; otherwise only names, kinds and sizes are compared,
    /// and the bytes only of files written (modification time) at or after `writtenSince` and
    /// after the folder itself was last changed: a file of a folder installed earlier written
    /// since then, or one written after its folder was made.
    public func damage(in folder: String, readingBytes: Bool = true, readingBytesWrittenSince writtenSince: Int64? = nil) -> String? {
        var threshold = writtenSince
        if let since = writtenSince {
            var own = stat()
            threshold = lstat(folder, &own) == 0 ? max(since, FileStamp(own).modified) : since
        }
        for file in files {
            let path = folder + "/" + file.name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return "\(file.name) is missing" }
            guard UInt64(info.st_size) == file.size else { return "\(file.name) is \(info.st_size) bytes, it was installed with \(file.size)" }
            guard readingBytes || threshold.map({ FileStamp(info).modified >= $0 }) == true else { continue }
            guard let handle = FileHandle(forReadingAtPath: path) else { return "\(file.name) cannot be read" }
            defer { try? handle.close() }
            var crc = CRC32()
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                chunk.withUnsafeBytes { crc.update(UnsafeRawBufferPointer($0)) }
            }
            guard crc.value == file.crc32 else { return "\(file.name) does not hold the bytes it was installed with" }
        }
        // Escaped: a name holding a newline or a terminal escape cannot forge a line of a report.
        return extraEntry(in: folder).map { "\(Self.encode($0)) was not installed with it" }
    }

    /// The first file, link or folder under `folder` that the inventory does not account for.
    private func extraEntry(in folder: String) -> String? {
        var expected = Set(files.map(\.name))
        var parents = Set<String>()
        for file in files {
            var parent = file.name
            while let slash = parent.lastIndex(of: "/") {
                parent = String(parent[..<slash])
                parents.insert(parent)
            }
        }
        expected.formUnion(parents)
        // A link in place of a folder passes `lstat` of the files below it (it follows links
        // in the middle of a path): what is behind it was not installed.
        for parent in parents {
            var info = stat()
            guard lstat(folder + "/" + parent, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return parent }
        }
        var pending = [""]
        while let relative = pending.popLast() {
            let path = relative.isEmpty ? folder : folder + "/" + relative
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                let child = relative.isEmpty ? name : relative + "/" + name
                guard expected.contains(child) else { return child }
                var info = stat()
                if lstat(folder + "/" + child, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { pending.append(child) }
            }
        }
        return nil
    }

    /// Bytes the block takes (its files' sizes).
    public var size: UInt64 { files.totalBytes(\.size) }
}
