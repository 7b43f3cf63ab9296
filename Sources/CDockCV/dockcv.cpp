// dockcv.cpp: the C++ side of the shim declared in include/dockcv.h, in six files: this one
// (status, checks of encoded pictures, the library), dockcv_image.cpp, dockcv_motion.cpp,
// dockcv_video.cpp, dockcv_detectors.cpp, dockcv_faces.cpp; what they share is in
// dockcv_internal.hpp.
//
// Each function is a few lines of OpenCV wrapped in `guarded`, which turns any C++ exception
// into a dcv_status. Policy (thresholds, working sizes, coordinates) lives on the Swift side;
// what is here beyond plain calls are the checks that keep OpenCV from crashing on an input it
// does not handle (an image smaller than the HOG window), and the fixed preprocessing each
// model was trained with.

#include "dockcv_internal.hpp"

namespace dockcv_shim {

void set_status(dcv_status *status, int code, const std::string &message) {
    if (status == nullptr) return;
    status->code = code;
    std::string line = message;
    for (char &c : line) if (c == '\n' || c == '\r') c = ' ';
    std::strncpy(status->message, line.c_str(), sizeof(status->message) - 1);
    status->message[sizeof(status->message) - 1] = '\0';
}

void clear_status(dcv_status *status) { set_status(status, DCV_OK, ""); }

// OpenCV and FFmpeg print their own warnings to stderr; DockTrack reports errors itself,
// one line each, so both are silenced once before the first capture or image is opened.
void quiet_libraries() {
    static std::once_flag once;
    std::call_once(once, [] {
        setenv("OPENCV_FFMPEG_LOGLEVEL", "-8", 0);  // AV_LOG_QUIET unless the user set it
        cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
        // The largest picture a decoder may allocate for, DCV_MAX_PICTURE_PIXELS: a header that
        // claims more (a 32000x32000 JPEG in a camera's stream) is an error for that picture,
        // not gigabytes. FFmpeg's decoders take max_pixels from OpenCV's capture options (read
        // at each open). OPENCV_IO_MAX_IMAGE_PIXELS is set for child processes only: OpenCV 4.6
        // reads it as its library loads, so pictures are checked by picture_size_allowed. A
        // limit the user set is kept.
        const std::string limit = std::to_string(DCV_MAX_PICTURE_PIXELS);
        setenv("OPENCV_IO_MAX_IMAGE_PIXELS", limit.c_str(), 0);
        const char *options = getenv("OPENCV_FFMPEG_CAPTURE_OPTIONS");
        std::string merged = options ? options : "";
        if (merged.find("max_pixels") == std::string::npos) {
            merged += (merged.empty() ? "" : "|") + std::string("max_pixels;") + limit;
            setenv("OPENCV_FFMPEG_CAPTURE_OPTIONS", merged.c_str(), 1);
        }
    });
}

// The most pixels a picture's header declares: JPEG (the frame header libjpeg itself would use,
// found as its marker reader finds it), PNG (IHDR) and BMP (the info header); 0 when none of
// these headers is there.
//
// JPEG: after SOI, libjpeg's next_marker() skips any bytes that are not 0xFF (garbage between
// segments) and the 0xFF fill bytes, reads a marker, and skips a segment it does not need by the
// length the segment gives (APPn, COM, DQT, DHT...): so a frame header hidden after garbage is
// found, and bytes that look like one inside an EXIF or other APP segment (a camera's thumbnail,
// an editor's metadata) are not read as one. The first SOFn is the one decoded (a second is an
// error to libjpeg); SOS or EOI before any means there is none to check.
double declared_pixels(const uchar *bytes, size_t count) {
    if (count >= 4 && bytes[0] == 0xFF && bytes[1] == 0xD8) {
        size_t i = 2;
        while (i < count) {
            while (i < count && bytes[i] != 0xFF) ++i;        // garbage
            while (i < count && bytes[i] == 0xFF) ++i;        // fill bytes
            if (i >= count) break;
            const uchar marker = bytes[i++];
            if (marker == 0x00) continue;                     // a stuffed 0xFF: not a marker
            const bool standalone = marker == 0x01 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7);
            if (standalone) continue;
            if (marker == 0xD9 || marker == 0xDA) return 0;    // EOI, SOS: no frame header first
            if (i + 2 > count) break;
            const size_t length = (size_t(bytes[i]) << 8) | bytes[i + 1];
            const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
            if (frame) {
                if (i + 7 > count) break;
                const double height = (bytes[i + 3] << 8) | bytes[i + 4];
                const double width = (bytes[i + 5] << 8) | bytes[i + 6];
                return width * height;
            }
            // A length under 2 does not stop libjpeg: it skips nothing and reads on after the
            // length's two bytes (an APP0 of length 1 hid a 32000x32000 frame header behind it;
            // found by the mjpeg-parts fuzz target).
            i += length < 2 ? 2 : length;
        }
        return 0;
    }
    auto big_endian = [&](size_t at) { return double((uint32_t(bytes[at]) << 24) | (uint32_t(bytes[at + 1]) << 16) | (uint32_t(bytes[at + 2]) << 8) | bytes[at + 3]); };
    static const uchar png[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (count >= 24 && std::memcmp(bytes, png, 8) == 0 && std::memcmp(bytes + 12, "IHDR", 4) == 0) {
        return big_endian(16) * big_endian(20);
    }
    if (count >= 26 && bytes[0] == 'B' && bytes[1] == 'M') {
        auto little = [&](size_t at) { return int32_t(uint32_t(bytes[at]) | (uint32_t(bytes[at + 1]) << 8) | (uint32_t(bytes[at + 2]) << 16) | (uint32_t(bytes[at + 3]) << 24)); };
        return std::abs(double(little(18))) * std::abs(double(little(22)));
    }
    return 0;
}

// Whether `bytes` begin as a JPEG does (a Motion JPEG stream's pictures must).
bool is_jpeg(const uchar *bytes, size_t count) {
    return count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF;
}

// Whether `bytes` begin as a picture file DockTrack reads: JPEG, PNG, BMP, TIFF, WebP or PNM.
// OpenCV picks a decoder by the bytes alone and Debian's also has DICOM (GDCM), JPEG 2000,
// OpenEXR, Radiance and Sun raster decoders; GDCM aborts the process on a malformed file (found
// by the mjpeg-parts fuzz target), so those formats are not handed to it.
bool picture_format_allowed(const uchar *bytes, size_t count) {
    if (is_jpeg(bytes, count)) return true;
    if (count >= 8 && std::memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0) return true;
    if (count >= 2 && bytes[0] == 'B' && bytes[1] == 'M') return true;
    if (count >= 4 && (std::memcmp(bytes, "II*\0", 4) == 0 || std::memcmp(bytes, "MM\0*", 4) == 0)) return true;
    if (count >= 12 && std::memcmp(bytes, "RIFF", 4) == 0 && std::memcmp(bytes + 8, "WEBP", 4) == 0) return true;
    return count >= 3 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '6' && std::isspace(bytes[2]);
}

// Whether a picture's declared size is within DCV_MAX_PICTURE_PIXELS, read from its header
// before anything is decoded (libjpeg allocates what the header says: 3 GB for a 32000x32000
// claim in a 543-byte JPEG; OpenCV's own limit is a gigapixel, and OPENCV_IO_MAX_IMAGE_PIXELS is
// read when the library loads, before any code of ours runs). A picture without a header read
// here is left to the decoder.
bool picture_size_allowed(const uchar *bytes, size_t count) {
    return declared_pixels(bytes, count) <= double(DCV_MAX_PICTURE_PIXELS);
}


int copy_boxes(const std::vector<cv::Rect> &rects, const std::vector<double> &scores,
               dcv_box *out, int capacity) {
    int n = 0;
    for (size_t i = 0; i < rects.size() && n < capacity; ++i, ++n) {
        out[n] = dcv_box{(float)rects[i].x, (float)rects[i].y, (float)rects[i].width,
                         (float)rects[i].height, i < scores.size() ? (float)scores[i] : 0.0f};
    }
    return n;
}

bool usable(const dcv_image *image, dcv_status *status) {
    if (image == nullptr || image->mat.empty()) {
        set_status(status, DCV_ERR_ARGUMENT, "empty image");
        return false;
    }
    return true;
}
}  // namespace dockcv_shim

// ---- library ------------------------------------------------------------------------------

const char *dcv_version(void) { return CV_VERSION; }
void dcv_set_num_threads(int threads) { cv::setNumThreads(threads); }
int dcv_get_num_threads(void) { return cv::getNumThreads(); }
void dcv_keep_freed_blocks(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}
