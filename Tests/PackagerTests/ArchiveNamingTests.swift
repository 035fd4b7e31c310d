import Manifest
import Foundation
import Packager
import Testing
import TestSupport

/// Archive names are injective over every url_name: the property is checked on random names
/// built to hit the old collisions (`Intro` and `intro-<8 hex>`), and the spelling is shown
/// to be decodable, which is what makes it injective.
@Suite struct ArchiveNamingTests {
    static func name(of archive: String) -> String {
        String((ArchivePath.installFolder(of: archive) ?? "").split(separator: "/", maxSplits: 1)[1])
    }

    /// Reads a spelled name back into the url_name's bytes; nil for the hashed form.
    static func decode(_ spelled: String) -> [UInt8]? {
        let bytes = Array(spelled.utf8)
        if spelled.hasPrefix("~~~") { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "~") else {
                out.append(bytes[i])
                i += 1
                continue
            }
            if i + 1 < bytes.count, bytes[i + 1] != UInt8(ascii: "~") {
                out.append(bytes[i + 1] - 32)
                i += 2
            } else {
                guard i + 3 < bytes.count, let byte = UInt8(String(decoding: bytes[(i + 2)...(i + 3)], as: UTF8.self), radix: 16) else { return [] }
                out.append(byte)
                i += 4
            }
        }
        return out
    }

    static func randomName(_ generator: inout SeededGenerator) -> String {
        let plain = Array("abcdefghijklmnopqrstuvwxyz0123456789_-")
        let other = Array("ABCDEFXYZ.~:%+ é\u{301}中😀") + ["e\u{301}"]
        let hex = Array("0123456789abcdef")
        func pick(_ set: [Character]) -> Character { set[Int(generator.next() % UInt64(set.count))] }
        let length = 1 + Int(generator.next() % 12)
        var name = String((0..<length).map { _ in generator.next() % 4 == 0 ? pick(other) : pick(plain) })
        switch generator.next() % 5 {
        case 0: name = name.lowercased() + "-" + String((0..<8).map { _ in pick(hex) })
        case 1: name += String(repeating: "x", count: Int(generator.next() % 130))
        case 2: name = name.uppercased()
        default: break
        }
        return name
    }

    @Test func namingIsInjectiveAndSafeOnRandomNames() throws {
        var generator = SeededGenerator(state: 17)
        var names = Set(["Intro", "intro", "INTRO", "iNTRO", "", ".", "..", "~", "~~~", "a~b"].map { Array($0.utf8) })
        // Every hashed form the old scheme gave these names is now a plain name of its own.
        for old in ["intro-2a7d4f4c", "intro-00000000", "caf_-1b2c3d4e"] { names.insert(Array(old.utf8)) }
        while names.count < 20_000 { names.insert(Array(Self.randomName(&generator).utf8)) }
        var seen: [String: [UInt8]] = [:]
        var seenIgnoringCase: Set<String> = []
        for bytes in names {
            let urlName = String(decoding: bytes, as: UTF8.self)
            guard Array(urlName.utf8) == bytes else { continue }  // not valid UTF-8
            let archive = ArchiveNaming.archivePath(type: "html", urlName: urlName)
            let component = Self.name(of: archive)
            #expect(archive == "html/\(component).zip")
            if let other = seen[component] {
                Issue.record("\(String(decoding: other, as: UTF8.self)) and \(urlName) share \(archive)")
            }
            seen[component] = bytes
            #expect(seenIgnoringCase.insert(component.lowercased()).inserted, "\(component) differs from another only by case")
            #expect(component.utf8.allSatisfy { "abcdefghijklmnopqrstuvwxyz0123456789_-~".utf8.contains($0) }, "\(component)")
            #expect(!component.isEmpty && component.utf8.count <= ArchiveNaming.maximumSpelledLength, "\(component)")
            if let decoded = Self.decode(component) {
                #expect(decoded == bytes, "\(component) spells \(urlName)")
            } else {
                #expect(component.utf8.count == 67 && (bytes.isEmpty || bytes.count > ArchiveNaming.maximumSpelledLength / 4))
            }
        }
        #expect(seen.count > 19_000)
    }

    @Test func plainNamesAreKeptAndOthersSpelledReadably() {
        #expect(ArchiveNaming.archivePath(type: "html", urlName: "intro-2a7d4f4c") == "html/intro-2a7d4f4c.zip")
        #expect(ArchiveNaming.archivePath(type: "html", urlName: "0a1b2c_d-e") == "html/0a1b2c_d-e.zip")
        #expect(ArchiveNaming.archivePath(type: "html", urlName: "Intro") == "html/~intro.zip")
        #expect(ArchiveNaming.archivePath(type: "problem", urlName: "caf\u{E9} 1") == "problem/caf~~c3~~a9~~201.zip")
        #expect(ArchiveNaming.archivePath(type: "html", urlName: "_x") == "html/_x.zip")
        let long = ArchiveNaming.archivePath(type: "html", urlName: String(repeating: "a", count: 121))
        #expect(long.hasPrefix("html/~~~") && long.utf8.count == "html/".count + 67 + ".zip".count)
    }

    /// Install folders are `<type>/<name>`, one level each, with no `.` or `/` in a name, so
    /// no folder lies inside another's; the demo course's archives keep their plain names.
    @Test func demoCourseArchivesKeepTheirNamesAndNeverNest() throws {
        let (out, _) = try build(TestSupport.demoCourse)
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/manifest.json"))) as? [String: Any])
        let blocks = try #require(manifest["blocks"] as? [[String: Any]])
        let archives = blocks.compactMap { $0["archive"] as? String }
        #expect(archives.count > 20)
        for archive in archives {
            let parts = archive.split(separator: "/")
            #expect(parts.count == 2 && archive.hasSuffix(".zip"))
            let name = String(parts[1].dropLast(4))
            #expect(name.utf8.allSatisfy { "abcdefghijklmnopqrstuvwxyz0123456789_-".utf8.contains($0) }, "\(archive) is no longer plain")
        }
        let folders = archives.map { ArchivePath.installFolder(of: $0) ?? "" }
        #expect(Set(folders).count == folders.count)
        for a in folders { for b in folders where a != b { #expect(!b.hasPrefix(a + "/")) } }
    }
}
