// The whole of DockTrack in one import: every stage's module, for programs that want them all
// (the two executables, the tests). A program that needs only some stages imports those.
@_exported import DockTrackCore
@_exported import DockTrackSystem
@_exported import DockTrackMedia
@_exported import DockTrackDetection
@_exported import DockTrackAudio
@_exported import DockTrackTracking
@_exported import DockTrackFraming
@_exported import DockTrackDock
@_exported import DockTrackRuntime
@_exported import DockTrackClient
