import DockTrackCore
import Foundation

/// A real pan/tilt device behind a dock session.
public protocol DockHardware: AnyObject {
    /// What the device has, in the hello's words (`pan`, `tilt`, `systemTracking`...).
    var capabilities: [DockCapability] { get }
    func apply(_ command: DockCommand, at time: Double) throws(DockError)
    /// The device's present orientation, when it can say.
    func orientation() throws(DockError) -> DockOrientation?
    /// A zooming device's scale and its zoom now (`nil` for a device that does not zoom).
    var zoomState: (scale: ZoomScale, zoom: Double)? { get }
}

extension DockHardware {
    public var zoomState: (scale: ZoomScale, zoom: Double)? { nil }
}

/// A device that zooms (an ONVIF PTZ camera), in its generic zoom space: 0 the widest, 1 the
/// closest.
public protocol ZoomingHardware: DockHardware {
    /// The zoom last sent or read.
    var zoom: Double { get }
    func zoom(to zoom: Double) throws(DockError)
    /// How its zoom space maps to magnification.
    var zoomScale: ZoomScale { get }
}

extension ZoomingHardware {
    public var zoomState: (scale: ZoomScale, zoom: Double)? { (zoomScale, zoom) }
}

/// How a generic zoom space (0 the widest, 1 the closest) maps to magnification: linearly,
/// from 1 to the largest magnification (1 throughout when that is not known).
public struct ZoomScale: Sendable, Equatable {
    public var maximumMagnification: Double?

    public init(maximumMagnification: Double?) { self.maximumMagnification = maximumMagnification }

    /// The magnification at `zoom` (1 at the widest).
    public func magnification(at zoom: Double) -> Double {
        guard let largest = maximumMagnification, largest.isFinite, largest > 1, zoom.isFinite else { return 1 }
        return 1 + max(0, min(1, zoom)) * (largest - 1)
    }

    /// The zoom (0...1) at `magnification`: the inverse of ``magnification(at:)``.
    public func zoom(atMagnification magnification: Double) -> Double {
        guard let largest = maximumMagnification, largest.isFinite, largest > 1, magnification.isFinite else { return 0 }
        return max(0, min(1, (magnification - 1) / (largest - 1)))
    }
}
