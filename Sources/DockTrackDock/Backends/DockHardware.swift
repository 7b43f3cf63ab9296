import DockTrackCore
import Foundation

/// A real pan/tilt device behind a dock session.
public protocol DockHardware: AnyObject {
    /// What the device has, in the hello's words (`pan`, `tilt`, `systemTracking`...).
    var capabilities: [DockCapability] { get }
    func apply(_ command: DockCommand, at time: Double) throws(DockError)
    /// The device's present orientation, when it can say.
    func orientation() throws(DockError) -> DockOrientation?
}

/// A device that zooms (an ONVIF PTZ camera), in its generic zoom space: 0 the widest, 1 the
/// closest.
public protocol ZoomingHardware: DockHardware {
    /// The zoom last sent or read.
    var zoom: Double { get }
    func zoom(to zoom: Double) throws(DockError)
    /// The magnification at `zoom` (1 at the widest), and its inverse.
    func magnification(at zoom: Double) -> Double
    func zoom(atMagnification magnification: Double) -> Double
}
