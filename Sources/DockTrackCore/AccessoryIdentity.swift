import Foundation

/// Who a dock is, as it says in its hello.
public struct AccessoryIdentity: Sendable, Equatable {
    public var name: String
    /// DockKit's category: always `trackingStand` here.
    public var category = "trackingStand"
    public var identifier: UUID
    public var firmwareVersion: String
    public var hardwareModel: String

    public init(name: String, identifier: UUID, firmwareVersion: String, hardwareModel: String) {
        self.name = name
        self.identifier = identifier
        self.firmwareVersion = firmwareVersion
        self.hardwareModel = hardwareModel
    }

    package var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("name", name)
        line.add("category", category)
        line.add("identifier", identifier.uuidString)
        line.add("firmwareVersion", firmwareVersion)
        line.add("hardwareModel", hardwareModel)
        return line
    }
}

/// The dock protocol's name and version, as both ends offer it in their hello.
public enum DockProtocol {
    public static let name = "org.docktrack.dock/1"
}
