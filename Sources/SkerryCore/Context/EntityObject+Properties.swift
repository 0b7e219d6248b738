/// Typed properties for ``EntityObject`` subclasses, where Core Data code declares `@NSManaged`
/// properties (which need the Objective-C runtime: on Linux, a class declaring one compiles and
/// fails to link, as Core Data is what supplies the accessors).
///
/// A subclass declares computed properties over these subscripts:
///
/// ```swift
/// final class Book: EntityObject {
///     var title: String? {
///         get { self[attribute: "title"] }
///         set { self[attribute: "title"] = newValue }
///     }
///     var author: Author? {
///         get { self[toOne: "author"] }
///         set { self[toOne: "author"] = newValue }
///     }
/// }
/// ```
///
/// A property cannot throw, so an error (an unknown key, a value of the wrong type, an object
/// whose context dropped it or whose row was deleted) is recorded on the object's context with
/// ``ObjectContext/recordError(_:)``: its next save refuses with it. A read then returns nil, or,
/// for a non-optional type, which has no value to return, stops the process with the error's
/// message, as Core Data raises: read attributes that may be empty as optionals, or with the
/// throwing `value(forKey:as:)`.
extension EntityObject {
    /// The value of an attribute, typed by the property that reads it; setting it writes the
    /// attribute (nil clears it). See the extension's documentation for errors.
    public subscript<T: AttributeValueConvertible>(attribute key: String) -> T {
        get {
            do throws(SkerryError) {
                return try value(forKey: key, as: T.self)
            } catch {
                record(error)
                // An optional type reads a missing value as nil: return that.
                guard let none = T(attributeValue: .null, type: .string) else {
                    preconditionFailure("\(error)")
                }
                return none
            }
        }
        set {
            do { try setValue(newValue, forKey: key) } catch { record(error) }
        }
    }

    /// The destination of a to-one relationship, as the class of its entity; setting it sets
    /// the relationship (nil clears it). See the extension's documentation for errors.
    public subscript<T: EntityObject>(toOne key: String) -> T? {
        get {
            do throws(SkerryError) {
                guard let object = try relatedObject(forKey: key) else { return nil }
                guard let typed = object as? T else { throw classError(object, T.self, key) }
                return typed
            } catch {
                record(error)
                return nil
            }
        }
        set {
            do { try setRelatedObject(newValue, forKey: key) } catch { record(error) }
        }
    }

    /// The members of a to-many relationship, as the class of its entity (Core Data's `NSSet`);
    /// setting it replaces them. See the extension's documentation for errors; a read that
    /// fails returns no members.
    public subscript<T: EntityObject>(toMany key: String) -> Set<T> {
        get {
            do throws(SkerryError) {
                var members = Set<T>()
                for object in try relatedObjects(forKey: key) {
                    guard let typed = object as? T else { throw classError(object, T.self, key) }
                    members.insert(typed)
                }
                return members
            } catch {
                record(error)
                return []
            }
        }
        set {
            do { try setRelatedObjects(Array(newValue), forKey: key) } catch { record(error) }
        }
    }

    /// Records an error of a property on the object's context, if it still has one (an object
    /// without a context cannot be saved: there is nothing to fail).
    private func record(_ error: SkerryError) {
        if registration.isRegistered { withOwner { $0.recordError(error) } }
    }

    private func classError(_ object: EntityObject, _ type: EntityObject.Type, _ key: String) -> SkerryError {
        SkerryError(
            .wrongValueType,
            "'\(entity.name).\(key)' holds an object of class \(String(reflecting: Swift.type(of: object))), not \(String(reflecting: type)).",
            entityName: entity.name, key: key, objectID: objectID)
    }
}
