/// A JSON document parsed strictly for `ManifestReader`: objects, arrays, strings, integers,
/// booleans and null. Anything else (a fraction, an exponent, a duplicate key, a lone
/// surrogate, trailing bytes) makes `parse` return nil, and the caller takes the generic
/// decoder, which says precisely what is wrong. Not `indirect`: the arrays hold the nesting,
/// and a box around every value was an allocation for each of a manifest's million strings.
enum JSONValue: Equatable {
    /// Members in document order, keys unique. Not a dictionary: a manifest holds one object
    /// per block, each of a dozen keys, and hashing every key and freeing every table was most
    /// of what reading 100,000 blocks cost.
    case object([JSONMember])
    case array([JSONValue])
    case string(String)
    case integer(Int64)
    case unsigned(UInt64)
    case boolean(Bool)
    case null

    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer)
            guard let value = parser.value(depth: 0) else { return nil }
            parser.skipSpace()
            return parser.position == buffer.count ? value : nil
        }
    }

    /// A top-level object with the members named `skipped` left out: each is checked to be
    /// well-formed JSON and passed over without a value being made of it. A manifest's blocks
    /// are 265 MB at 92,000 blocks, and a reader that wants only its other fields (the search
    /// index, the course id) made a gigabyte of values to drop them.
    static func parseObject(_ bytes: [UInt8], skipping skipped: Set<String>) -> [JSONMember]? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer)
            parser.skippedAtTop = skipped
            guard case .object(let members)? = parser.value(depth: 0) else { return nil }
            parser.skipSpace()
            return parser.position == buffer.count ? members : nil
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        /// Members of the top-level object that are passed over (`parseObject`).
        var skippedAtTop: Set<String> = []
        var skippedSeen: Set<String> = []
        /// Deeper than any manifest nests; bounds the recursion on hostile input.
        static let maximumDepth = 32
        static let keysComparedOneByOne = 24

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - position >= count else { return false }
            for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return false }
            position += count
            return true
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth < Self.maximumDepth else { return nil }
            skipSpace()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var members: [JSONMember] = []
                // Past a few keys, duplicates are found by hash, not by comparing with each.
                var keys: Set<String>?
                skipSpace()
                if consume(UInt8(ascii: "}")) { return .object(members) }
                repeat {
                    skipSpace()
                    guard let key = string() else { return nil }
                    skipSpace()
                    guard consume(UInt8(ascii: ":")) else { return nil }
                    if depth == 0, skippedAtTop.contains(key) {
                        guard skip(depth: depth + 1), skippedSeen.insert(key).inserted else { return nil }
                        skipSpace()
                        continue
                    }
                    guard let element = value(depth: depth + 1) else { return nil }
                    if members.count == Self.keysComparedOneByOne { keys = Set(members.map(\.key)) }
                    if keys == nil {
                        guard !members.contains(where: { $0.key == key }) else { return nil }
                    } else {
                        guard keys?.insert(key).inserted == true else { return nil }
                    }
                    members.append(JSONMember(key: key, value: element))
                    skipSpace()
                } while consume(UInt8(ascii: ","))
                return consume(UInt8(ascii: "}")) ? .object(members) : nil
            case UInt8(ascii: "["):
                position += 1
                var array: [JSONValue] = []
                skipSpace()
                if consume(UInt8(ascii: "]")) { return .array(array) }
                repeat {
                    guard let element = value(depth: depth + 1) else { return nil }
                    array.append(element)
                    skipSpace()
                } while consume(UInt8(ascii: ","))
                return consume(UInt8(ascii: "]")) ? .array(array) : nil
            case UInt8(ascii: "\""):
                return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true") ? .boolean(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .boolean(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number()
            }
        }

        /// Passes over one value, as strictly as `value` reads it but for the UTF-8 of its
        /// strings and its objects' duplicate keys, neither of which a skipped value can make
        /// wrong.
        mutating func skip(depth: Int) -> Bool {
            guard depth < Self.maximumDepth else { return false }
            skipSpace()
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                skipSpace()
                if consume(UInt8(ascii: "}")) { return true }
                repeat {
                    skipSpace()
                    guard skipString() else { return false }
                    skipSpace()
                    guard consume(UInt8(ascii: ":")), skip(depth: depth + 1) else { return false }
                    skipSpace()
                } while consume(UInt8(ascii: ","))
                return consume(UInt8(ascii: "}"))
            case UInt8(ascii: "["):
                position += 1
                skipSpace()
                if consume(UInt8(ascii: "]")) { return true }
                repeat {
                    guard skip(depth: depth + 1) else { return false }
                    skipSpace()
                } while consume(UInt8(ascii: ","))
                return consume(UInt8(ascii: "]"))
            case UInt8(ascii: "\""): return skipString()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number() != nil
            }
        }

        /// A string's bytes up to its closing quote, each escape one of JSON's.
        mutating func skipString() -> Bool {
            guard consume(UInt8(ascii: "\"")) else { return false }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { return false }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard hex4() != nil else { return false }
                    default: return false
                    }
                default:
                    guard byte >= 0x20 else { return false }
                }
            }
            return false
        }

        /// Integers only, without leading zeros.
        mutating func number() -> JSONValue? {
            let negative = consume(UInt8(ascii: "-"))
            let start = position
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") { position += 1 }
            let digits = position - start
            guard digits > 0, digits <= 19, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
            if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) { return nil }
            var magnitude: UInt64 = 0
            for index in start..<position { magnitude = magnitude * 10 + UInt64(bytes[index] - UInt8(ascii: "0")) }
            if negative {
                guard magnitude <= UInt64(Int64.max) else { return nil }
                return .integer(-Int64(magnitude))
            }
            return magnitude <= UInt64(Int64.max) ? .integer(Int64(magnitude)) : .unsigned(magnitude)
        }

        mutating func string() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = position
            var ascii = true
            // The common case: no escapes, copied as it is once the UTF-8 is known to be valid.
            while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\") {
                guard bytes[position] >= 0x20 else { return nil }
                ascii = ascii && bytes[position] < 0x80
                position += 1
            }
            guard position < bytes.count else { return nil }
            if consume(UInt8(ascii: "\"")) {
                // Straight from the document: one copy, none for a short string. ASCII (ids,
                // paths, hashes) is valid UTF-8 as it is; `String(validating:)` takes a generic
                // path that was a tenth of reading a manifest of 100,000 blocks.
                let literal = UnsafeBufferPointer(rebasing: bytes[start..<position - 1])
                return ascii ? String(decoding: literal, as: UTF8.self) : String(validating: literal, as: UTF8.self)
            }
            var decoded = Array(bytes[start..<position])
            while !consume(UInt8(ascii: "\"")) {
                guard position < bytes.count else { return nil }
                let byte = bytes[position]
                position += 1
                guard byte >= 0x20 else { return nil }
                guard byte == UInt8(ascii: "\\") else {
                    decoded.append(byte)
                    continue
                }
                guard position < bytes.count else { return nil }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard literal("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    decoded.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: return nil
                }
            }
            return String(validating: decoded, as: UTF8.self)
        }

        mutating func hex4() -> UInt32? {
            guard bytes.count - position >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value = value << 4 | UInt32(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
            }
            return value
        }
    }
}

struct JSONMember: Equatable {
    let key: String
    let value: JSONValue
}
