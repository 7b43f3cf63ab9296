// A client speaks in DockTrack's value types (orientations, velocities, tracked subjects, errors):
// one import gives them with the client. DockTrackCore is pure Swift, no C libraries.
@_exported import DockTrackCore
