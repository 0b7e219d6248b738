extension ObjectModel {
    /// A canonical text of what the store depends on, entities sorted by name, hashed with
    /// 64-bit FNV-1a. Stable across processes and platforms (unlike `Hasher`).
    static func computeVersionHash(_ entities: [EntityDescription], modifier: String? = nil) -> String {
        var text = "skerry-model-1\n"
        if let modifier { text += "modifier \(modifier)\n" }
        for entity in entities.sorted(by: { $0.name < $1.name }) {
            text += "entity \(entity.name)\n"
            if let superentity = entity.superentity { text += "  superentity \(superentity.name)\n" }
            if entity.isAbstract { text += "  abstract\n" }
            for attribute in entity.attributes {
                text += "  attribute \(attribute.name) \(attribute.type.rawValue) \(attribute.isOptional ? "optional" : "required")"
                if attribute.isTransient { text += " transient" }
                if let derivation = attribute.derivation { text += " derived \(derivation)" }
                text += "\n"
            }
            for r in entity.relationships {
                text +=
                    "  relationship \(r.name) \(r.destinationEntityName) \(r.inverseName ?? "-") \(r.isToMany ? "many" : "one") \(r.isOrdered ? "ordered" : "unordered") \(r.isOptional ? "optional" : "required") \(r.deleteRule.rawValue) \(r.minCount) \(r.maxCount)\n"
            }
            for constraint in entity.uniquenessConstraints {
                text += "  unique \(constraint.joined(separator: ","))\n"
            }
            for index in entity.indexes {
                text += "  index \(index.attributeNames.joined(separator: ","))\n"
            }
        }
        return fnv1a64Hex(text)
    }

    package static func fnv1a64Hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
