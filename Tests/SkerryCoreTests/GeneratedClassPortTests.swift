import Foundation
import SkerryCore // not @testable: the classes are declared as an app declares them
import Testing

// The classes Xcode generates for a real app's model, ported: VirtualTourist's model
// (github.com/BryanMorfe/VirtualTourist, the fixture VirtualTourist.xcdatamodeld, Class fields
// "Pin" and "Photo", codeGenerationType "class"). Xcode writes `Pin+CoreDataClass.swift`
// (`@objc(Pin) public class Pin: NSManagedObject {}`) and `Pin+CoreDataProperties.swift`
// (`fetchRequest()`, one `@NSManaged` property per attribute and relationship, and the to-many
// accessors). The port drops `@objc(Pin)` and `@NSManaged`; `fetchRequest()` is inherited.

final class Pin: EntityObject {}

extension Pin {
    // Xcode: @NSManaged public var latitude: Double (a scalar: usesScalarValueType)
    var latitude: Double {
        get { self[attribute: "latitude"] }
        set { self[attribute: "latitude"] = newValue }
    }
    var longitude: Double {
        get { self[attribute: "longitude"] }
        set { self[attribute: "longitude"] = newValue }
    }
    // Xcode: @NSManaged public var photos: NSSet?
    var photos: Set<Photo> {
        get { self[toMany: "photos"] }
        set { self[toMany: "photos"] = newValue }
    }

    // Xcode: @objc(addPhotosObject:) @NSManaged public func addToPhotos(_ value: Photo)
    func addToPhotos(_ value: Photo) { photos.insert(value) }
    // Xcode: @objc(removePhotosObject:) @NSManaged public func removeFromPhotos(_ value: Photo)
    func removeFromPhotos(_ value: Photo) { photos.remove(value) }
}

final class Photo: EntityObject {}

extension Photo {
    // Xcode: @NSManaged public var imageData: Data?, url: String?, pin: Pin?
    var imageData: Data? {
        get { self[attribute: "imageData"] }
        set { self[attribute: "imageData"] = newValue }
    }
    var url: String? {
        get { self[attribute: "url"] }
        set { self[attribute: "url"] = newValue }
    }
    var pin: Pin? {
        get { self[toOne: "pin"] }
        set { self[toOne: "pin"] = newValue }
    }
}

@Suite struct GeneratedClassPortTests {
    private func stack(at url: URL) throws -> PersistentStack {
        let model = try XcodeModel.loadModel(contentsOf: FixtureFiles.url("VirtualTourist.xcdatamodeld"))
        // The Class fields name Pin and Photo without a module: registered by those names.
        try model.setManagedObjectClasses([Pin.self, Photo.self])
        let stack = PersistentStack(name: "VirtualTourist", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        return stack
    }

    @Test func virtualTouristsGeneratedClassesRoundTripThroughASQLiteFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("VirtualTourist.sqlite")
        let writer = try stack(at: url).newBackgroundContext()
        try writer.performAndWait {
            // As the app's map view controller adds a pin and its photos.
            let pin = try Pin(context: writer)
            pin.latitude = 37.7749
            pin.longitude = -122.4194
            for index in 0..<3 {
                let photo = try Photo(context: writer)
                photo.url = "https://farm.example/\(index).jpg"
                pin.addToPhotos(photo)
            }
            // A pin at the model's defaults (0.0), untouched.
            _ = try Pin(context: writer)
            try writer.save()
            #expect(writer.recordedError == nil)
        }

        let reader = try stack(at: url).newBackgroundContext()
        try reader.performAndWait {
            var request = Pin.fetchRequest()
            request.predicate = try FetchPredicate(format: "latitude > %@", NSNumber(value: 1.0))
            let pins: [Pin] = try reader.fetch(request)
            #expect(pins.count == 1)
            let pin = try #require(pins.first)
            #expect(pin.latitude == 37.7749 && pin.longitude == -122.4194)
            #expect(Set(pin.photos.compactMap(\.url)) == Set((0..<3).map { "https://farm.example/\($0).jpg" }))
            #expect(pin.photos.allSatisfy { $0.pin === pin && $0.imageData == nil })
            // As the photo album downloads an image and drops another photo.
            let photos = pin.photos.sorted { ($0.url ?? "") < ($1.url ?? "") }
            photos[0].imageData = Data([0xFF, 0xD8])
            pin.removeFromPhotos(photos[2])
            try reader.delete(photos[2])
            try reader.save()
            #expect(reader.recordedError == nil)
            #expect(pin.photos.count == 2)
            // Deleting the pin deletes its photos (the model's Cascade rule).
            try reader.delete(pin)
            try reader.save()
            let left: [Photo] = try reader.fetch(Photo.fetchRequest())
            #expect(left.isEmpty)
            let all: [Pin] = try reader.fetch(Pin.fetchRequest())
            #expect(all.count == 1 && all[0].latitude == 0)
        }
    }
}
