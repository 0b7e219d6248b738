import Foundation
import SkerryCore
// Every file of this target sees the shared test kit without importing it.
@_exported import SkerryTestSupport

/// A model with one entity, for the integrations' tests.
func bookModel() throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("title", .string),
                AttributeDescription("year", .integer32, isOptional: true),
            ])
    ])
}
