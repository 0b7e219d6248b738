import Foundation
import Skerry
import Testing

/// Relations declared as in Sworm (by name only) get their inverse from the model's types.
@Suite struct InverseDerivationTests {
    struct Person: ManagedObjectConvertible {
        var name = ""
        static let entityName = "Person"
        static let attributes: Set<Attribute<Person>> = [Attribute(\.name, "name")]
        struct Relations {
            let pets = ToManyRelation<Pet>("pets")
            let home = ToOneRelation<House>("home")
            let mother = ToOneRelation<Person>("mother")
            let children = ToManyRelation<Person>("children")
        }
        static let relations = Relations()
    }

    struct Pet: ManagedObjectConvertible {
        var name = ""
        static let entityName = "Pet"
        static let attributes: Set<Attribute<Pet>> = [Attribute(\.name, "name")]
        struct Relations {
            let owner = ToOneRelation<Person>("owner")
        }
        static let relations = Relations()
    }

    /// Two relations to `Person`: which one is the inverse of `Person.home` cannot be told, unless
    /// one side says so.
    struct House: ManagedObjectConvertible {
        var address = ""
        static let entityName = "House"
        static let attributes: Set<Attribute<House>> = [Attribute(\.address, "address")]
        struct Relations {
            let residents = ToManyRelation<Person>("residents", inverse: "home")
            let landlord = ToOneRelation<Person>("landlord")
        }
        static let relations = Relations()
    }

    @Test func eachSideNamingTheOtherOnceMakesAnInversePair() throws {
        let model = try ObjectModel(types: [Person.self, Pet.self, House.self])
        let person = try #require(model.entity(named: "Person"))
        let pet = try #require(model.entity(named: "Pet"))
        #expect(person.relationship(named: "pets")?.inverseName == "owner")
        #expect(pet.relationship(named: "owner")?.inverseName == "pets")
    }

    @Test func anInverseDeclaredOnOneSideIsCompletedOnTheOther() throws {
        let model = try ObjectModel(types: [Person.self, Pet.self, House.self])
        #expect(model.entity(named: "Person")?.relationship(named: "home")?.inverseName == "residents")
        #expect(model.entity(named: "House")?.relationship(named: "residents")?.inverseName == "home")
        #expect(model.entity(named: "House")?.relationship(named: "landlord")?.inverseName == nil)
    }

    @Test func ambiguousAndSelfRelationsKeepNoInverse() throws {
        let model = try ObjectModel(types: [Person.self, Pet.self, House.self])
        let person = try #require(model.entity(named: "Person"))
        #expect(person.relationship(named: "mother")?.inverseName == nil)
        #expect(person.relationship(named: "children")?.inverseName == nil)
    }

    /// The derived inverse is kept in sync like a declared one.
    @Test func aDerivedInverseFollowsChanges() throws {
        let stack = PersistentStack(name: "Inverses", model: try ObjectModel(types: [Person.self, Pet.self, House.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let container = PersistentContainer(managedObjectContext: stack.newBackgroundContext)
        try container.perform { context in
            let ann = try context.insert(Person(name: "Ann"))
            let rex = try context.insert(Pet(name: "Rex"))
            rex.owner = ann
        }
        let pets = try container.perform { context in
            try context.fetchOne(Person.all)?.pets.map { try $0.decode().name }
        }
        #expect(pets == ["Rex"])
    }
}
