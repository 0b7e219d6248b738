import Foundation
import Testing

@testable import SkerryCore

/// Mapping models whose value expressions go beyond a renamed property, on the hand-written Shop
/// fixtures (shaped like shipping apps' mapping models): key paths through to-one relationships
/// (`$source.vendor.name`, `$source.product.vendor.name`), a relationship set to the objects a
/// path of to-one relationships reaches, Foundation methods (`FUNCTION($source.title,
/// "uppercaseString")`), constants converted to their attribute's type, an entity renamed, and
/// an "add" entity mapping (no source entity); and the mapping models that cannot drive a step,
/// refused with a typed error saying why.
@Suite struct MappingModelExpressionTests {
    static let fixtures = FixtureFiles.folder

    static func versions() throws -> [XcodeModelVersion] {
        try XcodeModel(contentsOf: fixtures.appendingPathComponent("Shop.xcdatamodeld")).loadAllVersions()
    }

    static func mapping(_ folder: URL = fixtures.appendingPathComponent("ShopToShop2.xcmappingmodel")) throws -> XcodeMappingModel {
        try XcodeMappingModel(contentsOf: folder)
    }

    /// A copy of the Shop mapping model with `change` made to its text, in `directory`.
    static func changedMapping(_ directory: TemporaryDirectory, _ change: (String) -> String) throws -> URL {
        let text = try String(contentsOf: fixtures.appendingPathComponent("ShopToShop2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let folder = directory.url.appendingPathComponent("Changed.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(change(text).utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
        return folder
    }

    /// Two vendors, three products (one without a vendor, one without a SKU), a permission each.
    static func populate(_ context: ObjectContext) throws {
        let acme = try context.insert(entityName: "Vendor"), globex = try context.insert(entityName: "Vendor")
        try acme.setValue("Acme", forKey: "name")
        try globex.setValue("Globex", forKey: "name")
        for (title, cents, sku, vendor) in [("anvil", 1250, "AN-1", acme), ("rocket", 99_900, nil, globex), ("spring", 5, "S", nil)]
            as [(String, Int64, String?, EntityObject?)]
        {
            let product = try context.insert(entityName: "Product")
            try product.setValue(title, forKey: "title")
            try product.setValue(cents, forKey: "priceCents")
            try product.setValue(sku, forKey: "sku")
            try product.setRelatedObject(vendor, forKey: "vendor")
            let permission = try context.insert(entityName: "Permission")
            try permission.setValue("use-\(title)", forKey: "type")
            try permission.setRelatedObject(product, forKey: "product")
        }
        try context.save()
    }

    @Test func expressionsAreRead() throws {
        let mapping = try Self.mapping()
        #expect(mapping.entityMappings.map(\.name) == ["VendorToVendor", "ProductToProduct", "PermissionToProductPermission", "ToTag"])
        let product = mapping.entityMappings[1].attributeMappings
        #expect(product.first { $0.name == "vendorName" }?.valueExpression == .keyPath("vendor.name"))
        #expect(
            product.first { $0.name == "titleKey" }?.valueExpression
                == .function(
                    receiver: .function(receiver: .keyPath("title"), selector: "uppercaseString", arguments: []),
                    selector: "stringByAppendingString:", arguments: [.constant(.string("-1"))]))
        #expect(
            product.first { $0.name == "titleKey" }?.valueExpression?.description
                == #"FUNCTION(FUNCTION($source.title, "uppercaseString"), "stringByAppendingString:", "-1")"#)
        #expect(
            mapping.entityMappings[2].relationshipMappings.first { $0.name == "vendor" }?.valueExpression
                == .destinationInstances(sourceKeyPath: "product.vendor"))
        #expect(mapping.entityMappings[3].sourceEntityName == nil)
    }

    /// The mapping model carries every row, computes each expression, and links each permission
    /// to the vendor its product had, on SQLite and PostgreSQL.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func expressionsDriveTheStep(kind: StoreKind) throws {
        let versions = try Self.versions()
        let directory = TemporaryDirectory()
        let description =
            kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("Shop.sqlite"))
        do {
            let stack = PersistentStack(name: "Shop", model: versions[0].model)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait { try Self.populate(context) }
        }
        let mappingURL = Self.fixtures.appendingPathComponent("ShopToShop2.xcmappingmodel")
        // doc: xcode-mapping
        let mapping = try XcodeMappingModel(contentsOf: mappingURL) // the app's ShopToShop2.xcmappingmodel
        let plan = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping]) // versions: Shop, Shop 2
        // doc: end
        let stack = PersistentStack(name: "Shop", model: versions[1].model)
        var migrating = description
        migrating.migrationPlan = plan
        stack.persistentStoreDescriptions = [migrating]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let products = try context.fetch(FetchRequest(entityName: "Product", sortKeys: [SortKey("title")]))
            func values<T: AttributeValueConvertible>(_ key: String, _ type: T.Type) throws -> [T] {
                try products.map { try $0.value(forKey: key, as: T.self) }
            }
            #expect(try values("title", String.self) == ["anvil", "rocket", "spring"])
            #expect(try values("vendorName", String?.self) == ["Acme", "Globex", nil])
            #expect(try values("priceText", String?.self) == ["1250", "99900", "5"])
            #expect(try values("skuLength", Int16?.self) == [4, nil, 1])
            #expect(try values("titleKey", String?.self) == ["ANVIL-1", "ROCKET-1", "SPRING-1"])
            #expect(try values("isListed", Bool.self) == [true, true, true])
            #expect(try values("status", String.self) == ["listed", "listed", "listed"])
            let permissions = try context.fetch(FetchRequest(entityName: "ProductPermission", sortKeys: [SortKey("kind")]))
            #expect(try permissions.map { try $0.value(forKey: "kind", as: String.self) } == ["use-anvil", "use-rocket", "use-spring"])
            #expect(try permissions.map { try $0.value(forKey: "vendorName", as: String?.self) } == ["Acme", "Globex", nil])
            #expect(try permissions.map { try $0.relatedObject(forKey: "product") } == products)
            let vendors = try permissions.map { try $0.relatedObject(forKey: "vendor")?.value(forKey: "name", as: String.self) }
            #expect(vendors == ["Acme", "Globex", nil])
            #expect(try context.count(for: FetchRequest(entityName: "Tag")) == 0)
            // Vendor.permissions (to-many) is the other side of ProductPermission.vendor.
            let vendorObjects = try context.fetch(FetchRequest(entityName: "Vendor", sortKeys: [SortKey("name")]))
            #expect(try vendorObjects.map { try $0.relatedObjects(forKey: "permissions").count } == [1, 1])
        }
    }

    @Test func aMappingModelThatCannotBeReadNamesTheFile() throws {
        let directory = TemporaryDirectory()
        let empty = directory.url.appendingPathComponent("Empty.xcmappingmodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try Data("\n".utf8).write(to: empty.appendingPathComponent("xcmapping.xml"))
        let error = expectError(.invalidModel) { _ = try XcodeMappingModel(contentsOf: empty) }
        #expect(error?.message.contains("Empty.xcmappingmodel/xcmapping.xml") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("empty") == true)
        let missing = directory.url.appendingPathComponent("Missing.xcmappingmodel")
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: true)
        let absent = expectError(.invalidModel) { _ = try XcodeMappingModel(contentsOf: missing) }
        #expect(absent?.message.contains("Missing.xcmappingmodel/xcmapping.xml") == true)
        let broken = try Self.changedMapping(directory) { String($0.prefix(600)) }
        let malformed = expectError(.invalidModel) { _ = try XcodeMappingModel(contentsOf: broken) }
        #expect(malformed?.message.contains("Changed.xcmappingmodel/xcmapping.xml") == true)
    }

    /// A name that one of the two versions does not have is an error naming it, before any store
    /// is touched (the mapping model was made for other versions).
    @Test(arguments: [
        (">Permission</attribute>", ">Grant</attribute>", "the source entity 'Grant'", "Shop"),
        (">ProductPermission</attribute>", ">Right</attribute>", "the destination entity 'Right'", "Shop 2"),
        (">skuLength</attribute>", ">skuSize</attribute>", "the attribute 'Product.skuSize'", "Shop 2"),
        (">vendorName</attribute>", ">supplier</attribute>", "the attribute 'Product.supplier'", "Shop 2"),
    ])
    func aNameTheVersionsDoNotHaveIsNamed(from: String, to: String, named: String, version: String) throws {
        let directory = TemporaryDirectory()
        let folder = try Self.changedMapping(directory) { text in
            guard let range = text.range(of: from) else { return text }
            return text.replacingCharacters(in: range, with: to)
        }
        let mapping = try Self.mapping(folder)
        let error = expectError(.modelMismatch) { _ = try MigrationPlan(xcodeVersions: try Self.versions(), mappingModels: [mapping]) }
        #expect(error?.message.contains(named) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("'\(version)' does not have") == true, "\(error?.message ?? "")")
    }

    /// A constant that is no value of its attribute's type, and an expression Skerry cannot
    /// compute, are errors naming them.
    @Test func whatCannotBeComputedIsNamed() throws {
        let directory = TemporaryDirectory()
        let constant = try Self.changedMapping(directory) { text in
            // The constant "listed" set on priceCents (Integer 64) instead of status.
            text.replacingOccurrences(of: ">status</attribute>", with: ">priceCents</attribute>")
        }
        let error = expectError(.modelMismatch) {
            _ = try MigrationPlan(xcodeVersions: try Self.versions(), mappingModels: [try Self.mapping(constant)])
        }
        #expect(error?.message.contains(#"sets 'priceCents' to the constant "listed", which is no"#) == true, "\(error?.message ?? "")")
        #expect(error?.key == "ProductToProduct")
        // A method Skerry does not know, and a path through a to-many relationship.
        #expect(MappingValue.apply("length", to: .string("é"), []) == .int(1))
        #expect(MappingValue.apply("integerValue", to: .string(" 42abc"), []) == .int(42))
        #expect(MappingValue.apply("stringValue", to: .double(2.5), []) == .string("2.5"))
        #expect(MappingValue.apply("uppercaseString", to: .null, []) == .null)
        let versions = try Self.versions()
        for (expression, says) in [
            (
                XcodeMappingModel.ValueExpression.function(
                    receiver: .keyPath("title"), selector: "substringFromIndex:", arguments: [.constant(.int(1))]),
                "knows no method 'substringFromIndex:'"
            ),
            (.keyPath("permissions.type"), "'Product.permissions' is a to-many relationship"),
            (.keyPath("vendor.city"), "the attribute 'Vendor.city' (in $source.vendor.city)"),
        ] {
            let mapping = XcodeMappingModel(
                url: directory.url, sourceVersionName: "Shop", destinationVersionName: "Shop 2",
                entityMappings: [
                    .init(
                        name: "ProductToProduct", sourceEntityName: "Product", destinationEntityName: "Product",
                        migrationPolicyClassName: nil,
                        attributeMappings: [.init(name: "titleKey", valueExpression: expression)], relationshipMappings: [])
                ])
            let error = expectError(.modelMismatch) { _ = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping]) }
            #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
        }
        // A to-many relationship set through a path, whose to-one inverse nothing sets.
        let vendors = XcodeMappingModel(
            url: directory.url, sourceVersionName: "Shop", destinationVersionName: "Shop 2",
            entityMappings: [
                .init(
                    name: "VendorToVendor", sourceEntityName: "Vendor", destinationEntityName: "Vendor", migrationPolicyClassName: nil,
                    attributeMappings: [],
                    relationshipMappings: [
                        .init(name: "permissions", valueExpression: .destinationInstances(sourceKeyPath: "products.permissions"))
                    ])
            ])
        let toMany = expectError(.modelMismatch) { _ = try MigrationPlan(xcodeVersions: versions, mappingModels: [vendors]) }
        #expect(toMany?.message.contains("whose to-one inverse the mapping model does not set") == true, "\(toMany?.message ?? "")")
    }

    /// The custom migration policy class of a mapping is refused by name, and the step says to
    /// write a MigrationStep; an entity mapping without a source entity does nothing.
    @Test func aCustomPolicyIsRefusedByName() throws {
        let directory = TemporaryDirectory()
        let folder = try Self.changedMapping(directory) { text in
            text.replacingOccurrences(
                of: #"<attribute name="migrationpolicyclassname" type="string"></attribute>"#,
                with: #"<attribute name="migrationpolicyclassname" type="string">Shop.VendorMigrationPolicy</attribute>"#)
        }
        let error = expectError(.modelMismatch) {
            _ = try MigrationPlan(xcodeVersions: try Self.versions(), mappingModels: [try Self.mapping(folder)])
        }
        #expect(error?.message.contains("custom migration policy class 'Shop.VendorMigrationPolicy'") == true)
        #expect(error?.message.contains("MigrationStep") == true)
        #expect(error?.key == "VendorToVendor")
    }
}

/// The corpus harness (CorpusHarnessTests) on a corpus of one repository holding the Shop
/// fixtures: the pair with a mapping model between its versions migrates with it, and without
/// mapping models (`SKERRY_CORPUS_MAPPINGS=off`) the same pair is a lightweight migration (stage
/// "migrate").
@Suite struct CorpusMappingHarnessTests {
    @Test func aPairWithAMappingModelMigratesWithIt() throws {
        let directory = TemporaryDirectory()
        let repository = directory.url.appendingPathComponent("shop+app")
        try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
        for item in ["Shop.xcdatamodeld", "ShopToShop2.xcmappingmodel"] {
            try FileManager.default.copyItem(
                at: FixtureFiles.folder.appendingPathComponent(item), to: repository.appendingPathComponent(item))
        }
        let bundle = repository.appendingPathComponent("Shop.xcdatamodeld")
        var mapped = CorpusReport(), plain = CorpusReport()
        CorpusHarness(bundle: bundle, root: directory.url, usesMappings: true).run(into: &mapped)
        CorpusHarness(bundle: bundle, root: directory.url, usesMappings: false).run(into: &plain)
        let pair = try #require(mapped.lines.first { $0[1].hasPrefix("mapped ") })
        #expect(pair[1] == "mapped Shop -> Shop 2")
        #expect(pair[2] == "ok" && pair[3] == "carried", "\(pair)")
        #expect(pair[4] == "ShopToShop2.xcmappingmodel")
        let lightweight = try #require(plain.lines.first { $0[1].hasPrefix("migrate ") })
        #expect(lightweight[1] == "migrate Shop -> Shop 2")
        #expect(!plain.lines.contains { $0[1].hasPrefix("mapped ") })
        #expect(CorpusHarness(bundle: bundle, root: directory.url).mappingModels(for: try XcodeModel(contentsOf: bundle)).count == 1)
        // Checked against the mapping model, the lightweight migration loses the permissions
        // (Permission -> ProductPermission is the mapping's) and the values it declares.
        var checked = CorpusReport()
        CorpusHarness(bundle: bundle, root: directory.url, usesMappings: true, checksLightweightAgainstMappings: true).run(into: &checked)
        let unmapped = try #require(checked.lines.first { $0[1].hasPrefix("unmapped ") })
        #expect(unmapped[1] == "unmapped Shop -> Shop 2")
        #expect(unmapped[2] == "LOST" && unmapped[3] == "lightweight loses", "\(unmapped)")
        #expect(unmapped[4].contains("Permission->ProductPermission: 4 of 4 rows missing"), "\(unmapped[4])")
    }

    /// The harness checks the values a mapping model declares (a copied attribute, a constant):
    /// a store without them is reported.
    @Test func theHarnessChecksTheValuesTheMappingDeclares() throws {
        let versions = try MappingModelExpressionTests.versions()
        var old = CorpusSnapshot(), new = CorpusSnapshot()
        old.objects["Permission"] = ["Permission/p1": .init(values: ["type": .string("use")], relationships: [:])]
        new.objects["ProductPermission"] = ["ProductPermission/p1": .init(values: ["kind": .string("use")], relationships: [:])]
        var mapped = MappedChanges(entities: ["ProductPermission": "Permission"])
        mapped.expected = ["ProductPermission.kind": .copied("type")]
        #expect(
            CorpusHarness.difference(old, new, from: versions[0].model, to: versions[1].model, sameVersion: false, mapped: mapped) == nil)
        mapped.expected["ProductPermission.kind"] = .constant(.string("listed"))
        let difference = CorpusHarness.difference(
            old, new, from: versions[0].model, to: versions[1].model, sameVersion: false, mapped: mapped)
        #expect(difference?.contains(#"the mapping model gives "listed", the store has "use""#) == true, "\(difference ?? "")")
    }
}
