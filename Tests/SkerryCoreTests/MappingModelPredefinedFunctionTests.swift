import Foundation
import Testing

@testable import SkerryCore

/// Value expressions that call one of `NSExpression`'s predefined functions (`now()`,
/// `uppercase:($source.title)`, `modulus:by:($source.priceCents, 100)`), as Xcode archives them:
/// a function expression whose receiver is Foundation's `_NSPredicateUtilities` class. JSQCoreDataKit's
/// example mapping model sets a date attribute to `now()`; it used to be refused as
/// `FUNCTION(nil, "now")`. The archives below were written for this test by a script (keyed
/// archives of the expressions, as Foundation writes them).
@Suite struct MappingModelPredefinedFunctionTests {
    static let now =
        "YnBsaXN0MDDUAQIDBAUGLC9ZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKpBwgTFBkaISUpVSRudWxs1QkKCwwNDg8QERJWJGNsYXNzW05TQXJndW1lbnRzXxAQTlNFeHByZXNzaW9uVHlwZVlOU09wZXJhbmReTlNTZWxlY3Rvck5hbWWACIAGEASAA4ACU25vd9MJFQsWFxhfEBhOU0NvbnN0YW50VmFsdWVDbGFzc05hbWWABYAEEABfEBVfTlNQcmVkaWNhdGVVdGlsaXRpZXPSGxwdHlgkY2xhc3Nlc1okY2xhc3NuYW1lox4fIF8QGU5TQ29uc3RhbnRWYWx1ZUV4cHJlc3Npb25cTlNFeHByZXNzaW9uWE5TT2JqZWN00gkiIyRaTlMub2JqZWN0c4AHoNIbHCYnoycoIF5OU011dGFibGVBcnJheVdOU0FycmF50hscKiujKx8gXxAUTlNGdW5jdGlvbkV4cHJlc3Npb27RLS5Ucm9vdIABEgABhqAACAARABsAJAApADIARABOAFQAXwBmAHIAhQCPAJ4AoACiAKQApgCoAKwAswDOANAA0gDUAOwA8QD6AQUBCQElATIBOwFAAUsBTQFOAVMBVwFmAW4BcwF3AY4BkQGWAZgAAAAAAAACAQAAAAAAAAAwAAAAAAAAAAAAAAAAAAABnQ=="
    static let uppercaseTitle =
        "YnBsaXN0MDDUAQIDBAUGTVBZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKvEBQHCBMUGRohJywtMDU2OT5CQ0c+S1UkbnVsbNUJCgsMDQ4PEBESViRjbGFzc1tOU0FyZ3VtZW50c18QEE5TRXhwcmVzc2lvblR5cGVZTlNPcGVyYW5kXk5TU2VsZWN0b3JOYW1lgBOAERAEgAOAAlp1cHBlcmNhc2U60wkVCxYXGF8QGE5TQ29uc3RhbnRWYWx1ZUNsYXNzTmFtZYAFgAQQAF8QFV9OU1ByZWRpY2F0ZVV0aWxpdGllc9IbHB0eWCRjbGFzc2VzWiRjbGFzc25hbWWjHh8gXxAZTlNDb25zdGFudFZhbHVlRXhwcmVzc2lvblxOU0V4cHJlc3Npb25YTlNPYmplY3TVCQoLDA0iIyQlJoAQgA0QA4AHgA/TCQsoKSorWk5TVmFyaWFibGWACRACgAhWc291cmNl0hscLi+jLx8gXxAUTlNWYXJpYWJsZUV4cHJlc3Npb27TCQsxMjM0WU5TS2V5UGF0aIAMEAqAC1V0aXRsZdIbHDc4ozgfIF8QHE5TS2V5UGF0aFNwZWNpZmllckV4cHJlc3Npb27SCTo7PFpOUy5vYmplY3RzgA6hPYAK0hscP0CjQEEgXk5TTXV0YWJsZUFycmF5V05TQXJyYXlfEBB2YWx1ZUZvcktleVBhdGg60hscREWkRUYfIF8QE05TS2V5UGF0aEV4cHJlc3Npb25fEBROU0Z1bmN0aW9uRXhwcmVzc2lvbtIJOkhJgBKhSoAG0hscTEajRh8g0U5PVHJvb3SAARIAAYagAAgAEQAbACQAKQAyAEQAWwBhAGwAcwB/AJIAnACrAK0ArwCxALMAtQDAAMcA4gDkAOYA6AEAAQUBDgEZAR0BOQFGAU8BWgFcAV4BYAFiAWQBawF2AXgBegF8AYMBiAGMAaMBqgG0AbYBuAG6AcABxQHJAegB7QH4AfoB/AH+AgMCBwIWAh4CMQI2AjsCUQJoAm0CbwJxAnMCeAJ8An8ChAKGAAAAAAAAAgEAAAAAAAAAUQAAAAAAAAAAAAAAAAAAAos="
    static let priceModulo100 =
        "YnBsaXN0MDDUAQIDBAUGU1ZZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKvEBcHCBMUGRohJywtMDU2OT5CQ0dLGkw+UVUkbnVsbNUJCgsMDQ4PEBESViRjbGFzc1tOU0FyZ3VtZW50c18QEE5TRXhwcmVzc2lvblR5cGVZTlNPcGVyYW5kXk5TU2VsZWN0b3JOYW1lgBaAFBAEgAOAAlttb2R1bHVzOmJ5OtMJFQsWFxhfEBhOU0NvbnN0YW50VmFsdWVDbGFzc05hbWWABYAEEABfEBVfTlNQcmVkaWNhdGVVdGlsaXRpZXPSGxwdHlgkY2xhc3Nlc1okY2xhc3NuYW1lox4fIF8QGU5TQ29uc3RhbnRWYWx1ZUV4cHJlc3Npb25cTlNFeHByZXNzaW9uWE5TT2JqZWN01QkKCwwNIiMkJSaAEIANEAOAB4AP0wkLKCkqK1pOU1ZhcmlhYmxlgAkQAoAIVnNvdXJjZdIbHC4voy8fIF8QFE5TVmFyaWFibGVFeHByZXNzaW9u0wkLMTIzNFlOU0tleVBhdGiADBAKgAtacHJpY2VDZW50c9IbHDc4ozgfIF8QHE5TS2V5UGF0aFNwZWNpZmllckV4cHJlc3Npb27SCTo7PFpOUy5vYmplY3RzgA6hPYAK0hscP0CjQEEgXk5TTXV0YWJsZUFycmF5V05TQXJyYXlfEBB2YWx1ZUZvcktleVBhdGg60hscREWkRUYfIF8QE05TS2V5UGF0aEV4cHJlc3Npb25fEBROU0Z1bmN0aW9uRXhwcmVzc2lvbtMJSAtJShhfEA9OU0NvbnN0YW50VmFsdWWAE4ASEGTSCTpNToAVok9QgAaAEdIbHFJGo0YfINFUVVRyb290gAESAAGGoAAIABEAGwAkACkAMgBEAF4AZABvAHYAggCVAJ8ArgCwALIAtAC2ALgAxADLAOYA6ADqAOwBBAEJARIBHQEhAT0BSgFTAV4BYAFiAWQBZgFoAW8BegF8AX4BgAGHAYwBkAGnAa4BuAG6AbwBvgHJAc4B0gHxAfYCAQIDAgUCBwIMAhACHwInAjoCPwJEAloCcQJ4AooCjAKOApAClQKXApoCnAKeAqMCpwKqAq8CsQAAAAAAAAIBAAAAAAAAAFcAAAAAAAAAAAAAAAAAAAK2"

    /// The mapping model's text with the value expression of the attribute mapping `name`
    /// replaced by the archive `base64`.
    static func replacingExpression(of name: String, with base64: String, in text: String) throws -> String {
        let marker = try #require(text.range(of: "<attribute name=\"name\" type=\"string\">\(name)</attribute>"))
        let object = try #require(text[..<marker.lowerBound].range(of: "<object type=\"XDDEVATTRIBUTEMAPPING\"", options: .backwards))
        let start = try #require(text[object.upperBound..<marker.lowerBound].range(of: "type=\"binary\">")).upperBound
        let end = try #require(text[start..<marker.lowerBound].range(of: "</attribute>")).lowerBound
        return text.replacingCharacters(in: start..<end, with: base64)
    }

    static func shopMappingText() throws -> String {
        try String(
            contentsOf: MappingModelExpressionTests.fixtures.appendingPathComponent("ShopToShop2.xcmappingmodel/xcmapping.xml"),
            encoding: .utf8)
    }

    @Test func predefinedFunctionsAreRead() throws {
        #expect(ArchivedExpression.read(try #require(Data(base64Encoded: Self.now))) == .predefinedFunction(name: "now", arguments: []))
        let upper = ArchivedExpression.read(try #require(Data(base64Encoded: Self.uppercaseTitle)))
        #expect(upper == .predefinedFunction(name: "uppercase:", arguments: [.keyPath("title")]))
        #expect(upper.description == "uppercase:($source.title)")
        #expect(
            ArchivedExpression.read(try #require(Data(base64Encoded: Self.priceModulo100)))
                == .predefinedFunction(name: "modulus:by:", arguments: [.keyPath("priceCents"), .constant(.int(100))]))
    }

    /// The Shop mapping with `status = uppercase:($source.title)`, `skuLength =
    /// modulus:by:($source.priceCents, 100)` and `priceText = now()` (priceText made a Date
    /// attribute in a copy of Shop 2): every row gets the computed values.
    @Test func predefinedFunctionsDriveTheStep() throws {
        let directory = TemporaryDirectory()
        let package = directory.url.appendingPathComponent("Shop.xcdatamodeld")
        try FileManager.default.copyItem(at: MappingModelExpressionTests.fixtures.appendingPathComponent("Shop.xcdatamodeld"), to: package)
        let shop2 = package.appendingPathComponent("Shop 2.xcdatamodel/contents")
        let model = try String(contentsOf: shop2, encoding: .utf8)
        let dated = model.replacingOccurrences(
            of: #"name="priceText" optional="YES" attributeType="String""#, with: #"name="priceText" optional="YES" attributeType="Date""#)
        #expect(dated != model)
        try Data(dated.utf8).write(to: shop2)
        var text = try Self.shopMappingText()
        text = try Self.replacingExpression(of: "status", with: Self.uppercaseTitle, in: text)
        text = try Self.replacingExpression(of: "skuLength", with: Self.priceModulo100, in: text)
        text = try Self.replacingExpression(of: "priceText", with: Self.now, in: text)
        let mappingURL = try MappingModelExpressionTests.changedMapping(directory) { [text] _ in text }
        let versions = try XcodeModel(contentsOf: package).loadAllVersions()
        let url = directory.file("Shop.sqlite")
        do {
            let stack = PersistentStack(name: "Shop", model: versions[0].model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait { try MappingModelExpressionTests.populate(context) }
        }
        let before = Date()
        let plan = try MigrationPlan(xcodeVersions: versions, mappingModels: [XcodeMappingModel(contentsOf: mappingURL)])
        let stack = PersistentStack(name: "Shop", model: versions[1].model)
        var description = StoreDescription(url: url)
        description.migrationPlan = plan
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let products = try context.fetch(FetchRequest(entityName: "Product", sortKeys: [SortKey("title")]))
            #expect(try products.map { try $0.value(forKey: "status", as: String.self) } == ["ANVIL", "ROCKET", "SPRING"])
            #expect(try products.map { try $0.value(forKey: "skuLength", as: Int16?.self) } == [50, 0, 5])
            for product in products {
                let migratedAt = try product.value(forKey: "priceText", as: Date.self)
                #expect(migratedAt >= before.addingTimeInterval(-1) && migratedAt <= Date().addingTimeInterval(1))
            }
        }
    }

    /// A predefined function Skerry does not compute is refused, naming it.
    @Test func anUnknownPredefinedFunctionIsRefusedByName() throws {
        let directory = TemporaryDirectory()
        let unknown = try #require(Data(base64Encoded: Self.uppercaseTitle))
        // The same archive with the function's name changed to one of the same length.
        let renamed = unknown.replacing(Data("uppercase:".utf8), with: Data("canonical:".utf8))
        #expect(ArchivedExpression.read(renamed) == .predefinedFunction(name: "canonical:", arguments: [.keyPath("title")]))
        let text = try Self.replacingExpression(of: "status", with: renamed.base64EncodedString(), in: Self.shopMappingText())
        let mappingURL = try MappingModelExpressionTests.changedMapping(directory) { _ in text }
        let versions = try MappingModelExpressionTests.versions()
        let error = expectError(.modelMismatch) {
            _ = try MigrationPlan(xcodeVersions: versions, mappingModels: [XcodeMappingModel(contentsOf: mappingURL)])
        }
        #expect(error?.message.contains("sets 'status' to canonical:($source.title)") == true, "\(error?.message ?? "-")")
        #expect(error?.message.contains("Skerry knows no function 'canonical:'") == true)
    }
}
