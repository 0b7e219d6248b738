import Foundation

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
/// ``ObjectContext/recordError(_:)``: its next save refuses with it. A read then returns nil for an
/// optional type, or an empty value for a non-optional one (0, false, "", empty data, the
/// reference date, the all-zero UUID, the file URL "/"). A missing number, Boolean or string read
/// through a non-optional property is not an error: it reads as 0, false or "", as in Core Data.
/// Read attributes that may be empty as optionals, or with the throwing `value(forKey:as:)`.
extension EntityObject {
    /// The value of an attribute, typed by the property that reads it; setting it writes the
    /// attribute (nil clears it). See the extension's documentation for errors.
    public subscript<T: AttributeValueConvertible>(attribute key: String) -> T {
        get {
            do throws(SkerryError) {
                return try value(forKey: key, as: T.self)
            } catch {
                // An optional type reads a failed read as nil.
                if let none = T(attributeValue: .null, type: .string) {
                    record(error)
                    return none
                }
                return emptyValue(forKey: key, as: T.self, failure: error)
            }
        }
        set {
            do { try setValue(newValue, forKey: key) } catch { record(error) }
        }
    }

    /// What a non-optional property reads when ``subscript(attribute:)`` fails: the type's empty
    /// value. A missing number or Boolean reads as 0 or false and a missing string as "", as Core
    /// Data reads a nil scalar or a nil string through a non-optional property, and nothing is
    /// recorded. Any other failure (a missing date, UUID, URL or data, an unknown key, a value of
    /// another type, an object gone from its context) is recorded on the context, so that its
    /// next save refuses with it, and reads as an empty placeholder of the type.
    private func emptyValue<T: AttributeValueConvertible>(forKey key: String, as type: T.Type, failure: SkerryError) -> T {
        let silent: [(AttributeValue, AttributeType)] = [
            (.int(0), .integer64), (.double(0), .double), (.bool(false), .boolean), (.decimal(0), .decimal),
            (.string(""), .string),
        ]
        if isMissingValue(forKey: key, readableAs: T.self) {
            for (value, attributeType) in silent {
                if let empty = T(attributeValue: value, type: attributeType) { return empty }
            }
        }
        record(failure)
        let placeholders: [(AttributeValue, AttributeType)] =
            silent + [
                (.data(Data()), .binary), (.date(Date(timeIntervalSinceReferenceDate: 0)), .date),
                (.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), .uuid),
                (.url(URL(fileURLWithPath: "/")), .url),
            ]
        for (value, attributeType) in placeholders {
            if let empty = T(attributeValue: value, type: attributeType) { return empty }
        }
        // A type of the caller's own that none of the storage forms converts to: there is no value
        // to return. The error is recorded; the message says which property to make optional.
        preconditionFailure("\(failure) A non-optional property of type \(T.self) has no value to return.")
    }

    /// Whether the attribute `key` exists, has values `type` can read, and holds no value. A read
    /// that fails says false: the caller then records the failure of its own read, which is the
    /// error to report.
    private func isMissingValue<T: AttributeValueConvertible>(forKey key: String, readableAs type: T.Type) -> Bool {
        guard let index = entity.attributeIndex(named: key), T.canRead(entity.attributes[index].type) else { return false }
        do throws(SkerryError) {
            return try value(forKey: key, as: AttributeValue.self).isNull
        } catch {
            return false
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
    /// setting it replaces them. An ordered relationship is set through
    /// ``subscript(orderedToMany:)`` (a set has no order to keep): setting it here is an error.
    /// See the extension's documentation for errors; a read that fails returns no members.
    public subscript<T: EntityObject>(toMany key: String) -> Set<T> {
        get {
            do throws(SkerryError) {
                return Set(try members(forKey: key, as: T.self))
            } catch {
                record(error)
                return []
            }
        }
        set {
            do throws(SkerryError) {
                if let relationship = entity.relationship(named: key), relationship.isOrdered {
                    throw SkerryError(
                        .invalidArgument,
                        "'\(entity.name).\(key)' is ordered: set it through self[orderedToMany:] (an array), not a set.",
                        entityName: entity.name, key: key, objectID: objectID)
                }
                try setRelatedObjects(Array(newValue), forKey: key)
            } catch {
                record(error)
            }
        }
    }

    /// The members of an ordered to-many relationship, in their order, as the class of their
    /// entity (Core Data's `NSOrderedSet`); setting it replaces them, in the array's order. See
    /// the extension's documentation for errors; a read that fails returns no members.
    public subscript<T: EntityObject>(orderedToMany key: String) -> [T] {
        get {
            do throws(SkerryError) {
                return try members(forKey: key, as: T.self)
            } catch {
                record(error)
                return []
            }
        }
        set {
            do { try setRelatedObjects(newValue, forKey: key) } catch { record(error) }
        }
    }

    /// The members of the to-many relationship `key`, in order for an ordered one, as `type`.
    /// - Throws: the errors of `relatedObjects(forKey:)`; `.wrongValueType` for a member of
    ///   another class.
    private func members<T: EntityObject>(forKey key: String, as type: T.Type) throws(SkerryError) -> [T] {
        var members: [T] = []
        for object in try relatedObjects(forKey: key) {
            guard let typed = object as? T else { throw classError(object, T.self, key) }
            members.append(typed)
        }
        return members
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
