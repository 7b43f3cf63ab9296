import Foundation

/// V4L2 camera-class controls a UVC pan/tilt/zoom camera offers (linux/v4l2-controls.h).
public enum UVCControl: UInt32, Sendable, CaseIterable {
    /// Arc-seconds, positive right.
    case panAbsolute = 0x009A_0908
    /// Arc-seconds, positive up.
    case tiltAbsolute = 0x009A_0909
    case panRelative = 0x009A_0904
    case tiltRelative = 0x009A_0905
    /// Signed speed steps, the sign is the direction.
    case panSpeed = 0x009A_0920
    case tiltSpeed = 0x009A_0921
    case zoomAbsolute = 0x009A_090D
}
