import DockTrack
import Foundation
import Testing

@Suite(.onTestThreads) struct JSONLinesTests {
    @Test func detectionRecordHasTheDocumentedFormat() {
        let record = DetectionRecord(frame: 0, time: 0, size: ImageSize(width: 768, height: 576), observations: [
            Observation(type: .humanFace, rect: UnitRect(x: 0.41, y: 0.62, width: 0.08, height: 0.11), confidence: 0.97),
        ])
        #expect(record.jsonLine == #"{"frame":0,"time":0.0,"width":768,"height":576,"observations":[{"type":"humanFace","rect":{"x":0.41,"y":0.62,"width":0.08,"height":0.11},"confidence":0.97}]}"#)
    }

    @Test func recordsReadBackAsWritten() throws {
        let record = DetectionRecord(frame: 12, time: 1.2, size: ImageSize(width: 176, height: 144), observations: [
            Observation(type: .humanBody, rect: UnitRect(x: 0.125, y: 0.25, width: 0.5, height: 0.625), confidence: 0.5),
        ])
        let decoded = try JSONDecoder().decode(DetectionRecord.self, from: Data(record.jsonLine.utf8))
        #expect(decoded == record)
    }

    @Test func numbersAndStrings() {
        #expect(JSONLine.number(0.123456, digits: 4) == "0.1235")
        #expect(JSONLine.number(2, digits: 3) == "2.0")
        #expect(JSONLine.number(-0.00001, digits: 3) == "0.0")
        #expect(JSONLine.number(.nan, digits: 3) == "null")
        #expect(JSONLine.quoted("a\"b\\c\n") == #""a\"b\\c\n""#)
    }
}
