/// An audio input a system offers.
public struct AudioDevice: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What opens it (an ALSA PCM name such as "hw:1,0").
    public var id: String
    /// What a person reads.
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    public var description: String { id == name ? id : "\(id) (\(name))" }
}
