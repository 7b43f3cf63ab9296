/// What kind of device an end of an audio route is (AVAudioSession's port types), as the audio
/// graph's properties say it: a computer's own microphone and speakers, headphones or a headset,
/// a USB device, Bluetooth, HDMI, a line jack, or a virtual device (a null sink, a loopback).
public enum AudioPortType: String, Sendable, CaseIterable, Codable {
    case builtInMicrophone, builtInSpeaker, headphones, headsetMicrophone, usbAudio, bluetooth, hdmi, lineIn, lineOut, virtual, unknown

    /// The type of a PipeWire node from its properties (`pw-dump`'s `info.props`): `node.name`,
    /// `media.class`, `device.api`, `device.bus`, `device.form-factor`, `factory.name`; an input
    /// or an output by `isInput`.
    public init(pipeWireProperties props: [String: String], isInput: Bool) {
        let name = (props["node.name"] ?? "").lowercased()
        let form = props["device.form-factor"] ?? ""
        let bus = props["device.bus"] ?? ""
        if props["media.class"]?.contains("Virtual") == true || props["factory.name"] == "support.null-audio-sink" || name.contains("loopback") {
            self = .virtual
        } else if props["device.api"] == "bluez5" || bus == "bluetooth" || name.hasPrefix("bluez_") {
            self = .bluetooth
        } else if form == "headset" {
            self = isInput ? .headsetMicrophone : .headphones
        } else if form == "headphone" {
            self = isInput ? .headsetMicrophone : .headphones
        } else if name.contains("hdmi") || name.contains("displayport") {
            self = .hdmi
        } else if bus == "usb" || name.contains(".usb-") {
            self = .usbAudio
        } else if form == "internal" || form == "microphone" && bus == "pci" || name.contains(".pci-") && name.contains("analog") {
            self = isInput ? .builtInMicrophone : .builtInSpeaker
        } else if name.contains("analog") || name.contains("line") {
            self = isInput ? .lineIn : .lineOut
        } else {
            self = .unknown
        }
    }
}
