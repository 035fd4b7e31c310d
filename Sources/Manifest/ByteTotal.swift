extension Sequence {
    /// The sum of `size` over the elements, held at `UInt64.max` rather than overflowing: the
    /// sizes come from manifests, inventories and records that a server, a damaged disk or
    /// another program wrote, and `+` traps. Two blocks of `"size": 18446744073709551615` in a
    /// manifest crashed `coursepack diff`.
    public func totalBytes(_ size: (Element) -> UInt64?) -> UInt64 {
        var total: UInt64 = 0
        for element in self {
            let (sum, overflowed) = total.addingReportingOverflow(size(element) ?? 0)
            if overflowed { return .max }
            total = sum
        }
        return total
    }
}
