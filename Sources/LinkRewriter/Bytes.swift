extension UInt8 {
    var isHTMLSpace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D || self == 0x0C }
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var asciiLowercased: UInt8 { (0x41...0x5A).contains(self) ? self + 0x20 : self }
}

extension Array where Element == UInt8 {
    func matches(_ literal: String, at i: Int) -> Bool {
        var p = i
        for b in literal.utf8 {
            guard p < count, self[p] == b else { return false }
            p += 1
        }
        return true
    }

    func matchesCaseInsensitive(_ literal: String, at i: Int) -> Bool {
        var p = i
        for b in literal.utf8 {
            guard p < count, self[p].asciiLowercased == b.asciiLowercased else { return false }
            p += 1
        }
        return true
    }

    func find(_ literal: String, from start: Int) -> Int? {
        guard let first = literal.utf8.first else { return start }
        var i = start
        while i < count {
            if self[i] == first, matches(literal, at: i) { return i }
            i += 1
        }
        return nil
    }

    func findCaseInsensitive(_ literal: String, from start: Int) -> Int? {
        var i = start
        while i < count {
            if self[i] == UInt8(ascii: "<"), matchesCaseInsensitive(literal, at: i) { return i }
            i += 1
        }
        return nil
    }

    func trimmed(_ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, self[lower].isHTMLSpace { lower += 1 }
        while upper > lower, self[upper - 1].isHTMLSpace { upper -= 1 }
        return lower..<upper
    }
}
