import Foundation

/// A V4L2 pixel format, by its four-character code ("YUYV", "MJPG", ...).
public struct FourCC: Hashable, Sendable, CustomStringConvertible, Codable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The code of four ASCII characters; `nil` unless `text` is exactly that.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        rawValue = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    public static let yuyv = FourCC("YUYV")!
    public static let mjpeg = FourCC("MJPG")!
    public static let jpeg = FourCC("JPEG")!
    public static let bgr24 = FourCC("BGR3")!
    public static let rgb24 = FourCC("RGB3")!
    public static let grey = FourCC("GREY")!

    public var description: String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }, as: UTF8.self)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let code = FourCC(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a four-character code: \(text)"))
        }
        self = code
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
