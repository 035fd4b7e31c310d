import FileSystem
import Foundation
import Manifest
import ZipArchive
import ZlibStream

/// The files an installed block folder holds (name, size, CRC-32, from its archive's central
/// directory), kept in the course folder's state so that a later sync can find a block whose
/// files were deleted, truncated or changed, and repair it.
public struct BlockInventory: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        public var name: String
        public var size: UInt64
        public var crc32: UInt32
    }

    public var files: [File]

    init(entries: [ZipReader.Entry]) {
        files = entries.filter { !$0.isDirectory }.map { File(name: $0.name, size: $0.uncompressedSize, crc32: $0.crc32) }
    }

    init(files: [File]) { self.files = files }

    /// `<course folder>/.coursepack-sync/files/<type>_<name>.tsv`.
    public static func path(stateFolder: String, blockFolder: String) -> String {
        stateFolder + "/files/" + blockFolder.replacingOccurrences(of: "/", with: "_") + ".tsv"
    }

    /// `synced` false: the sync waits for the whole file system before it swaps the block in.
    func write(to path: String, synced: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: DurableFile.folder(of: path), withIntermediateDirectories: true)
        let text = files.map { "\(String($0.crc32, radix: 16))\t\($0.size)\t\($0.name)\n" }.joined()
        try DurableFile.replace(path, with: Array(text.utf8), synced: synced)
    }

    /// Nil when there is no inventory or it cannot be read: the block's state is unknown.
    public static func read(_ path: String) -> BlockInventory? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var files: [File] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let crc = UInt32(fields[0], radix: 16), let size = UInt64(fields[1]) else { return nil }
            files.append(File(name: String(fields[2]), size: size, crc32: crc))
        }
        return BlockInventory(files: files)
    }

    /// What is wrong with `folder` compared with the inventory, or nil when every file is
    /// there with its size and CRC-32. `readingBytes`: reads every byte, so that a same-size
    /// edit is found too; otherwise only names, kinds and sizes are compared.
    public func damage(in folder: String, readingBytes: Bool = true) -> String? {
        for file in files {
            let path = folder + "/" + file.name
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return "\(file.name) is missing" }
            guard UInt64(info.st_size) == file.size else { return "\(file.name) is \(info.st_size) bytes, it was installed with \(file.size)" }
            guard readingBytes else { continue }
            guard let handle = FileHandle(forReadingAtPath: path) else { return "\(file.name) cannot be read" }
            defer { try? handle.close() }
            var crc = CRC32()
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                chunk.withUnsafeBytes { crc.update(UnsafeRawBufferPointer($0)) }
            }
            guard crc.value == file.crc32 else { return "\(file.name) does not hold the bytes it was installed with" }
        }
        return nil
    }

    /// Bytes the block takes (its files' sizes).
    public var size: UInt64 { files.reduce(0) { $0 + $1.size } }
}

extension SyncClient {
    /// The server's manifest, validated as untrusted input, without touching any local folder.
    public static func serverManifest(_ source: SyncSource, timeouts: NetworkTimeouts = NetworkTimeouts()) async throws(SyncError) -> CourseManifest {
        let manifest = try await ManifestLoader.load(source, timeouts: timeouts)
        try ManifestValidation.check(manifest, source: source.location(of: "manifest.json"))
        return manifest
    }

    /// The runtime archive as the block-like entry a sync plans and installs.
    public static func runtimeEntry(of manifest: CourseManifest) -> BlockEntry? {
        withSharedArchives(manifest).blocks.first { $0.type == "runtime" && $0.usageID.hasPrefix("runtime:") }
    }
}
