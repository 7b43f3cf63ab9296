// dockcv.cpp: the C++ side of the shim declared in include/dockcv.h.
//
// Each function is a few lines of OpenCV wrapped in `guarded`, which turns any C++ exception
// into a dcv_status. Policy (thresholds, working sizes, coordinates) lives on the Swift side;
// what is here beyond plain calls are the checks that keep OpenCV from crashing on an input it
// does not handle (an image smaller than the HOG window), and the fixed preprocessing each
// model was trained with.

#include "dockcv.h"
#include "hog_scorer.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <malloc.h>
#include <set>
#include <vector>

#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/features2d.hpp>
#include <opencv2/highgui.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>
#include <opencv2/tracking.hpp>
#include <opencv2/videoio.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

struct dcv_image { cv::Mat mat; };
struct dcv_capture {
    cv::VideoCapture capture;
    bool jpeg_pictures = false;  // a Motion JPEG stream read as its encoded pictures
};
struct dcv_writer { cv::VideoWriter writer; };
struct dcv_ssd { cv::dnn::Net net; cv::Mat blob; };
struct dcv_person_net { cv::dnn::Net net; cv::Mat blob; };
struct dcv_cascade { cv::CascadeClassifier classifier; };
struct dcv_hog {
    cv::HOGDescriptor descriptor;
    std::unique_ptr<dockcv::HogScorer> scorer;  // scores the descriptor's windows; set with it
    bool opencv_scoring = false;                // HOGDescriptor's own scoring instead
};
struct dcv_mtcnn { cv::dnn::Net pnet, rnet, onet; };
struct dcv_tracker { cv::Ptr<cv::Tracker> tracker; };

namespace {

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

// Runs `body`; a thrown exception becomes a status and `failed` is returned instead.
template <typename Result, typename Body>
Result guarded(dcv_status *status, Result failed, Body body) {
    clear_status(status);
    try {
        return body();
    } catch (const cv::Exception &e) {
        set_status(status, DCV_ERR_OPENCV, e.msg.empty() ? e.what() : e.msg);
    } catch (const std::bad_alloc &) {
        set_status(status, DCV_ERR_INTERNAL, "out of memory");
    } catch (const std::exception &e) {
        set_status(status, DCV_ERR_INTERNAL, e.what());
    } catch (...) {
        set_status(status, DCV_ERR_INTERNAL, "unknown C++ exception");
    }
    return failed;
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

}  // namespace

// ---- library ------------------------------------------------------------------------------

const char *dcv_version(void) { return CV_VERSION; }
void dcv_set_num_threads(int threads) { cv::setNumThreads(threads); }
int dcv_get_num_threads(void) { return cv::getNumThreads(); }
void dcv_keep_freed_blocks(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// ---- images -------------------------------------------------------------------------------

dcv_image *dcv_image_create(void) { return new (std::nothrow) dcv_image(); }
void dcv_image_destroy(dcv_image *image) { delete image; }

dcv_image *dcv_image_from_pixels(const uint8_t *pixels, int width, int height, int channels,
                                 size_t stride, dcv_status *status) {
    return guarded<dcv_image *>(status, nullptr, [&]() -> dcv_image * {
        if (pixels == nullptr || width <= 0 || height <= 0 || (channels != 1 && channels != 3)) {
            set_status(status, DCV_ERR_ARGUMENT, "bad pixel buffer");
            return nullptr;
        }
        cv::Mat view(height, width, channels == 3 ? CV_8UC3 : CV_8UC1,
                     const_cast<uint8_t *>(pixels), stride);
        auto *image = new dcv_image();
        image->mat = view.clone();
        return image;
    });
}

dcv_image *dcv_image_allocate(int width, int height, int channels, dcv_status *status) {
    return guarded<dcv_image *>(status, nullptr, [&]() -> dcv_image * {
        if (width <= 0 || height <= 0 || (channels != 1 && channels != 3)) {
            set_status(status, DCV_ERR_ARGUMENT, "bad image size");
            return nullptr;
        }
        auto *image = new dcv_image();
        image->mat.create(height, width, channels == 3 ? CV_8UC3 : CV_8UC1);
        return image;
    });
}

dcv_image *dcv_image_clone(const dcv_image *image, dcv_status *status) {
    return guarded<dcv_image *>(status, nullptr, [&]() -> dcv_image * {
        auto *copy = new dcv_image();
        if (image != nullptr) copy->mat = image->mat.clone();
        return copy;
    });
}

dcv_image *dcv_image_read(const char *path, dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_image *>(status, nullptr, [&]() -> dcv_image * {
        // Read whole and checked before it is decoded (imread would allocate what the header
        // claims: 4.2 GB for a 543-byte JPEG claiming 32000x32000).
        std::FILE *file = std::fopen(path, "rb");
        if (file == nullptr) {
            set_status(status, DCV_ERR_OPEN, "not a readable image");
            return nullptr;
        }
        std::vector<uchar> bytes;
        uchar chunk[65536];
        for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
        std::fclose(file);
        if (!bytes.empty() && !picture_format_allowed(bytes.data(), bytes.size())) {
            set_status(status, DCV_ERR_OPEN, "not a picture format DockTrack reads (JPEG, PNG, BMP, TIFF, WebP, PNM)");
            return nullptr;
        }
        if (!picture_size_allowed(bytes.data(), bytes.size())) {
            set_status(status, DCV_ERR_OPEN, "its header claims more than " + std::to_string(DCV_MAX_PICTURE_PIXELS / 1048576) + " megapixels");
            return nullptr;
        }
        cv::Mat mat = bytes.empty() ? cv::Mat() : cv::imdecode(bytes, cv::IMREAD_COLOR);
        if (mat.empty()) {
            set_status(status, DCV_ERR_OPEN, "not a readable image");
            return nullptr;
        }
        auto *image = new dcv_image();
        image->mat = mat;
        return image;
    });
}

int dcv_image_write(const dcv_image *image, const char *path, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(image, status)) return -1;
        if (!cv::imwrite(path, image->mat)) {
            set_status(status, DCV_ERR_WRITE, "could not write image");
            return -1;
        }
        return 0;
    });
}

long dcv_image_encode_jpeg(const dcv_image *image, int quality, uint8_t *out, size_t capacity, size_t *needed,
                           dcv_status *status) {
    return guarded<long>(status, -1, [&]() -> long {
        if (!usable(image, status)) return -1;
        std::vector<uchar> bytes;
        std::vector<int> params = {cv::IMWRITE_JPEG_QUALITY, std::min(100, std::max(1, quality))};
        if (!cv::imencode(".jpg", image->mat, bytes, params)) {
            set_status(status, DCV_ERR_WRITE, "could not encode JPEG");
            return -1;
        }
        if (needed) *needed = bytes.size();
        if (bytes.size() > capacity || !out) {
            set_status(status, DCV_ERR_WRITE, "JPEG larger than the buffer");
            return -1;
        }
        std::memcpy(out, bytes.data(), bytes.size());
        return (long)bytes.size();
    });
}

int dcv_image_width(const dcv_image *image) { return image ? image->mat.cols : 0; }
int dcv_image_height(const dcv_image *image) { return image ? image->mat.rows : 0; }
int dcv_image_channels(const dcv_image *image) { return image ? image->mat.channels() : 0; }
size_t dcv_image_stride(const dcv_image *image) { return image ? image->mat.step[0] : 0; }
const uint8_t *dcv_image_pixels(const dcv_image *image) {
    return (image && !image->mat.empty()) ? image->mat.data : nullptr;
}

uint8_t *dcv_image_mutable_pixels(dcv_image *image) {
    return (image && !image->mat.empty()) ? image->mat.data : nullptr;
}

int dcv_image_resize(const dcv_image *src, dcv_image *dst, int width, int height, int interpolation,
                     dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(src, status)) return -1;
        if (dst == nullptr || width <= 0 || height <= 0 ||
            (interpolation != DCV_RESIZE_SMOOTH && interpolation != DCV_RESIZE_BILINEAR_EXACT
             && interpolation != DCV_RESIZE_BILINEAR)) {
            set_status(status, DCV_ERR_ARGUMENT, "bad resize target");
            return -1;
        }
        bool shrinking = width < src->mat.cols;
        cv::resize(src->mat, dst->mat, cv::Size(width, height), 0, 0,
                   interpolation == DCV_RESIZE_BILINEAR_EXACT ? cv::INTER_LINEAR_EXACT
                   : interpolation == DCV_RESIZE_BILINEAR || !shrinking ? cv::INTER_LINEAR : cv::INTER_AREA);
        return 0;
    });
}

int dcv_image_gray(const dcv_image *src, dcv_image *dst, int equalize, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(src, status) || dst == nullptr) return -1;
        if (src->mat.channels() == 3) cv::cvtColor(src->mat, dst->mat, cv::COLOR_BGR2GRAY);
        else src->mat.copyTo(dst->mat);
        if (equalize) cv::equalizeHist(dst->mat, dst->mat);
        return 0;
    });
}

int dcv_image_small_float_gray(const dcv_image *src, dcv_image *dst, int width, int height, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(src, status) || dst == nullptr || width < 1 || height < 1) return -1;
        cv::Mat small, gray;
        cv::resize(src->mat, small, cv::Size(width, height), 0, 0, cv::INTER_LINEAR);
        if (small.channels() == 3) cv::cvtColor(small, gray, cv::COLOR_BGR2GRAY);
        else gray = small;
        gray.convertTo(dst->mat, CV_32F);
        return 0;
    });
}

int dcv_hann_window(dcv_image *dst, int width, int height, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (dst == nullptr || width < 2 || height < 2) return -1;
        cv::createHanningWindow(dst->mat, cv::Size(width, height), CV_32F);
        return 0;
    });
}

int dcv_phase_shift(const dcv_image *earlier, const dcv_image *later, const dcv_image *window, double *dx, double *dy,
                    double *response, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(earlier, status) || !usable(later, status) || !usable(window, status) || dx == nullptr || dy == nullptr
            || response == nullptr) return -1;
        const cv::Mat &a = earlier->mat, &b = later->mat, &w = window->mat;
        if (a.type() != CV_32FC1 || b.type() != CV_32FC1 || w.type() != CV_32FC1 || a.size() != b.size() || a.size() != w.size()) return -1;
        double peak = 0;
        cv::Point2d shift = cv::phaseCorrelate(a, b, w, &peak);
        *dx = shift.x;
        *dy = shift.y;
        *response = peak;
        return 0;
    });
}

int dcv_best_unit_offset(const dcv_image *earlier, const dcv_image *later, int *dx, int *dy, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(earlier, status) || !usable(later, status) || dx == nullptr || dy == nullptr) return -1;
        const cv::Mat &a = earlier->mat, &b = later->mat;
        if (a.type() != CV_32FC1 || b.type() != CV_32FC1 || a.size() != b.size() || a.cols < 3 || a.rows < 3) return -1;
        const cv::Rect inner(1, 1, a.cols - 2, a.rows - 2);
        static const int offsets[5][2] = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        double best = 0;
        *dx = 0;
        *dy = 0;
        for (int i = 0; i < 5; i++) {
            // later(x, y) against earlier(x - dx, y - dy): the offset that moves earlier onto later.
            const double difference = cv::norm(b(inner), a(inner - cv::Point(offsets[i][0], offsets[i][1])), cv::NORM_L1);
            if (i == 0 || difference < best) {
                best = difference;
                *dx = offsets[i][0];
                *dy = offsets[i][1];
            }
        }
        return 0;
    });
}

int dcv_feature_homography(const dcv_image *from, const dcv_image *to, double homography[9], int *inliers,
                           int *matches, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(from, status) || !usable(to, status) || homography == nullptr || inliers == nullptr || matches == nullptr) return -1;
        *inliers = 0;
        *matches = 0;
        auto gray = [](const cv::Mat &image) {
            if (image.channels() == 1) return image;
            cv::Mat out;
            cv::cvtColor(image, out, cv::COLOR_BGR2GRAY);
            return out;
        };
        // Features in proportion to the picture (a wide view holds the narrow one in a small
        // part of it), found down to faint corners (FAST threshold 10) and near the edges
        // (15-pixel patches): a small picture of a plain room still gives enough.
        auto features = [](const cv::Mat &image, std::vector<cv::KeyPoint> &points, cv::Mat &descriptors) {
            int count = std::clamp((int)(image.total() / 90), 1000, 10000);
            cv::Ptr<cv::ORB> orb = cv::ORB::create(count, 1.2f, 8, 15, 0, 2, cv::ORB::HARRIS_SCORE, 15, 10);
            orb->detectAndCompute(image, cv::noArray(), points, descriptors);
        };
        std::vector<cv::KeyPoint> fromPoints, toPoints;
        cv::Mat fromDescriptors, toDescriptors;
        features(gray(from->mat), fromPoints, fromDescriptors);
        features(gray(to->mat), toPoints, toDescriptors);
        if (fromDescriptors.rows < 2 || toDescriptors.rows < 2) return 1;
        cv::BFMatcher matcher(cv::NORM_HAMMING);
        std::vector<std::vector<cv::DMatch>> nearest;
        matcher.knnMatch(fromDescriptors, toDescriptors, nearest, 2);
        std::vector<cv::Point2f> fromKept, toKept;
        for (const auto &pair : nearest) {
            if (pair.size() == 2 && pair[0].distance < 0.8f * pair[1].distance) {
                fromKept.push_back(fromPoints[pair[0].queryIdx].pt);
                toKept.push_back(toPoints[pair[0].trainIdx].pt);
            }
        }
        *matches = (int)fromKept.size();
        if (fromKept.size() < 8) return 1;
        std::vector<unsigned char> agree;
        cv::Mat h = cv::findHomography(fromKept, toKept, cv::RANSAC, 3.0, agree);
        if (h.empty() || h.type() != CV_64FC1) return 1;
        for (int i = 0; i < 9; i++) homography[i] = h.at<double>(i / 3, i % 3);
        *inliers = (int)std::count(agree.begin(), agree.end(), (unsigned char)1);
        return 0;
    });
}

int dcv_image_paste(dcv_image *dst, const dcv_image *src, int x, int y, int width, int height, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(src, status) || !usable(dst, status) || width <= 0 || height <= 0) return -1;
        if (src->mat.channels() != dst->mat.channels()) return -1;
        cv::Mat resized;
        cv::resize(src->mat, resized, cv::Size(width, height), 0, 0, cv::INTER_AREA);
        cv::Rect region = cv::Rect(x, y, width, height) & cv::Rect(0, 0, dst->mat.cols, dst->mat.rows);
        if (region.empty()) return 0;
        resized(cv::Rect(region.x - x, region.y - y, region.width, region.height)).copyTo(dst->mat(region));
        return 0;
    });
}

int dcv_image_mirror(const dcv_image *src, dcv_image *dst, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(src, status) || dst == nullptr) return -1;
        cv::flip(src->mat, dst->mat, 1);
        return 0;
    });
}

void dcv_image_draw_rect(dcv_image *image, int x, int y, int width, int height, int b, int g,
                         int r, int thickness) {
    if (image == nullptr || image->mat.empty()) return;
    guarded<int>(nullptr, 0, [&] {
        cv::rectangle(image->mat, cv::Rect(x, y, width, height), cv::Scalar(b, g, r), thickness);
        return 0;
    });
}

void dcv_image_fill_rect(dcv_image *image, int x, int y, int width, int height, int b, int g,
                         int r) {
    dcv_image_draw_rect(image, x, y, width, height, b, g, r, cv::FILLED);
}

void dcv_image_draw_line(dcv_image *image, int x0, int y0, int x1, int y1, int b, int g, int r,
                         int thickness) {
    if (image == nullptr || image->mat.empty()) return;
    guarded<int>(nullptr, 0, [&] {
        cv::line(image->mat, cv::Point(x0, y0), cv::Point(x1, y1), cv::Scalar(b, g, r), thickness,
                 cv::LINE_AA);
        return 0;
    });
}

dcv_image *dcv_image_filled(int width, int height, int b, int g, int r, dcv_status *status) {
    return guarded<dcv_image *>(status, nullptr, [&]() -> dcv_image * {
        if (width <= 0 || height <= 0) {
            set_status(status, DCV_ERR_ARGUMENT, "bad canvas size");
            return nullptr;
        }
        auto *image = new dcv_image();
        image->mat = cv::Mat(height, width, CV_8UC3, cv::Scalar(b, g, r));
        return image;
    });
}

void dcv_image_draw_text(dcv_image *image, const char *text, int x, int y, double scale, int b,
                         int g, int r, int thickness) {
    if (image == nullptr || image->mat.empty() || text == nullptr) return;
    guarded<int>(nullptr, 0, [&] {
        cv::putText(image->mat, text, cv::Point(x, y), cv::FONT_HERSHEY_SIMPLEX, scale,
                    cv::Scalar(b, g, r), thickness, cv::LINE_AA);
        return 0;
    });
}

// The region (x, y, w, h) of `src`: a view into `src` when it lies inside it (no copy: callers
// only read it), else a new Mat of that size whose pixels outside `src` are 0.
static cv::Mat padded_region(const cv::Mat &src, int x, int y, int w, int h) {
    cv::Rect want(x, y, w, h);
    cv::Rect inside = want & cv::Rect(0, 0, src.cols, src.rows);
    if (inside == want && w > 0 && h > 0) return src(want);
    cv::Mat out = cv::Mat::zeros(h, w, src.type());
    if (inside.area() > 0) {
        src(inside).copyTo(out(cv::Rect(inside.x - x, inside.y - y, inside.width, inside.height)));
    }
    return out;
}

// The region `want` of `src` (it may reach outside: 0 there) shrunk to `size` by averaging the
// pixels each output pixel covers. OpenCV's INTER_AREA averages fast only by whole-number
// factors; by others (a close-up's 470x700 body to a 27x40 template) its general path took
// 0.92 ms, and a region reaching outside was first copied out padded. With `whole_steps`, the
// part inside is shrunk by the whole factor (from a centred crop of a multiple of it, at most
// factor - 1 pixels dropped), then sampled bilinearly where each output pixel's middle falls
// (the rest is under 2x): 0.24 ms, and the result keeps the region's geometry. Without, the
// result is INTER_AREA's own (a network's crop, as it was measured with).
static void shrunk_region(const cv::Mat &src, cv::Rect want, cv::Size size, bool whole_steps, cv::Mat &dst) {
    const cv::Rect inside = want & cv::Rect(0, 0, src.cols, src.rows);
    const int fx = std::max(1, want.width / std::max(1, size.width)), fy = std::max(1, want.height / std::max(1, size.height));
    if (!whole_steps || (fx == 1 && fy == 1) || inside.width < fx || inside.height < fy) {
        cv::resize(padded_region(src, want.x, want.y, want.width, want.height), dst, size, 0, 0, cv::INTER_AREA);
        return;
    }
    const int w = inside.width / fx * fx, h = inside.height / fy * fy;
    const int left = inside.x + (inside.width - w) / 2, top = inside.y + (inside.height - h) / 2;
    cv::Mat step;
    cv::resize(src(cv::Rect(left, top, w, h)), step, cv::Size(w / fx, h / fy), 0, 0, cv::INTER_AREA);
    // Output pixel i's middle, i + 0.5 output pixels in, is want.x + (i + 0.5) * sx in the
    // picture, which is pixel (that - left) / fx - 0.5 of the whole-step one.
    const double sx = (double)want.width / size.width, sy = (double)want.height / size.height;
    const cv::Matx23d to_step(sx / fx, 0, (want.x + 0.5 * sx - left) / fx - 0.5, 0, sy / fy, (want.y + 0.5 * sy - top) / fy - 0.5);
    if (step.size() == size && to_step(0, 2) == 0 && to_step(1, 2) == 0) {
        dst = step;
        return;
    }
    cv::warpAffine(step, dst, to_step, size, cv::INTER_LINEAR | cv::WARP_INVERSE_MAP,
                   inside == want ? cv::BORDER_REPLICATE : cv::BORDER_CONSTANT);
}

int dcv_image_crop(const dcv_image *src, dcv_image *dst, float x, float y, float width,
                   float height, int out_width, int out_height, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(src, status)) return -1;
        if (dst == nullptr || out_width <= 0 || out_height <= 0 || width < 1 || height < 1) {
            set_status(status, DCV_ERR_ARGUMENT, "bad crop request");
            return -1;
        }
        const int left = (int)std::lround(x), top = (int)std::lround(y), w = (int)std::lround(width), h = (int)std::lround(height);
        if (out_width < w && out_height < h) {
            shrunk_region(src->mat, cv::Rect(left, top, w, h), cv::Size(out_width, out_height), true, dst->mat);
        } else {
            cv::resize(padded_region(src->mat, left, top, w, h), dst->mat, cv::Size(out_width, out_height), 0, 0,
                       out_width < w ? cv::INTER_AREA : cv::INTER_LINEAR);
        }
        return 0;
    });
}

int dcv_image_patch(const dcv_image *image, float x, float y, float width, float height,
                    int out_width, int out_height, int gray, float *out, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(image, status)) return -1;
        if (out == nullptr || out_width <= 0 || out_height <= 0 || width < 1 || height < 1) {
            set_status(status, DCV_ERR_ARGUMENT, "bad patch request");
            return -1;
        }
        // Shrunk first, its colours turned after: the region is often a close-up's few hundred
        // pixels, the patch a few dozen.
        cv::Mat resized, small;
        shrunk_region(image->mat, cv::Rect((int)x, (int)y, (int)width, (int)height), cv::Size(out_width, out_height), true, resized);
        if (gray && resized.channels() == 3) cv::cvtColor(resized, small, cv::COLOR_BGR2GRAY);
        else if (!gray && resized.channels() == 1) cv::cvtColor(resized, small, cv::COLOR_GRAY2BGR);
        else small = resized;
        cv::Mat target(out_height, out_width, gray ? CV_32F : CV_32FC3, out);
        small.convertTo(target, gray ? CV_32F : CV_32FC3);
        return 0;
    });
}

namespace {
/* dcv_image_planar_input's and dcv_image_folded_input's checks and picture: the region resized
   to the content's size, BGR, 8 bits; false (status set) on a bad request. */
bool network_content(const dcv_image *image, float x, float y, float width, float height, int content_width,
                     int content_height, int out_width, int out_height, const float *out, dcv_status *status,
                     cv::Mat &small) {
    if (!usable(image, status)) return false;
    if (out == nullptr || content_width <= 0 || content_height <= 0 || content_width > out_width ||
        content_height > out_height || width < 1 || height < 1) {
        set_status(status, DCV_ERR_ARGUMENT, "bad network input request");
        return false;
    }
    cv::Mat region = padded_region(image->mat, (int)x, (int)y, (int)width, (int)height);
    if (region.channels() == 1) {
        cv::Mat colour;
        cv::cvtColor(region, colour, cv::COLOR_GRAY2BGR);
        region = colour;
    }
    if (region.cols == content_width && region.rows == content_height)
        small = region;
    else
        cv::resize(region, small, cv::Size(content_width, content_height), 0, 0, cv::INTER_LINEAR);
    return true;
}
}  // namespace

int dcv_image_planar_input(const dcv_image *image, float x, float y, float width, float height,
                           int content_width, int content_height, int out_width, int out_height,
                           float pad, float *out, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        cv::Mat small;
        if (!network_content(image, x, y, width, height, content_width, content_height, out_width, out_height, out,
                             status, small)) return -1;
        const size_t plane = (size_t)out_width * (size_t)out_height;
        cv::Mat planes[3];
        for (int c = 0; c < 3; c++) {
            planes[c] = cv::Mat(out_height, out_width, CV_32F, out + c * plane);
            if (content_width < out_width || content_height < out_height) planes[c].setTo(pad);
        }
        cv::Mat channels[3];
        cv::split(small, channels);
        for (int c = 0; c < 3; c++)
            channels[c].convertTo(planes[c](cv::Rect(0, 0, content_width, content_height)), CV_32F);
        return 0;
    });
}

int dcv_image_folded_input(const dcv_image *image, float x, float y, float width, float height,
                           int content_width, int content_height, int out_width, int out_height,
                           float pad, float *out, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (out_width % 2 != 0 || out_height % 2 != 0) {
            set_status(status, DCV_ERR_ARGUMENT, "a folded input needs an even width and height");
            return -1;
        }
        cv::Mat small;
        if (!network_content(image, x, y, width, height, content_width, content_height, out_width, out_height, out,
                             status, small)) return -1;
        const int half_width = out_width / 2, half_height = out_height / 2;
        const size_t plane = (size_t)half_width * (size_t)half_height;
        static const int quarters[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};  // (dy, dx)
        for (int k = 0; k < 4; k++) {
            const int dy = quarters[k][0], dx = quarters[k][1];
            for (int c = 0; c < 3; c++) {
                float *to = out + (size_t)(k * 3 + c) * plane;
                for (int row = 0; row < half_height; row++, to += half_width) {
                    const int from_row = 2 * row + dy;
                    if (from_row >= content_height) {
                        std::fill(to, to + half_width, pad);
                        continue;
                    }
                    const uint8_t *pixels = small.ptr<uint8_t>(from_row);
                    for (int column = 0; column < half_width; column++) {
                        const int from_column = 2 * column + dx;
                        to[column] = from_column < content_width ? (float)pixels[from_column * 3 + c] : pad;
                    }
                }
            }
        }
        return 0;
    });
}

int dcv_match_template(const float *search, int sw, int sh, const float *templ, int tw, int th,
                       int *best_x, int *best_y, float *score, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (search == nullptr || templ == nullptr || best_x == nullptr || best_y == nullptr ||
            score == nullptr || tw <= 0 || th <= 0 || tw > sw || th > sh) {
            set_status(status, DCV_ERR_ARGUMENT, "bad template match request");
            return -1;
        }
        cv::Mat area(sh, sw, CV_32F, const_cast<float *>(search));
        cv::Mat pattern(th, tw, CV_32F, const_cast<float *>(templ));
        cv::Mat result;
        cv::matchTemplate(area, pattern, result, cv::TM_CCOEFF_NORMED);
        cv::patchNaNs(result, 0.0);
        double best = 0;
        cv::Point at;
        cv::minMaxLoc(result, nullptr, &best, nullptr, &at);
        *best_x = at.x;
        *best_y = at.y;
        *score = std::isfinite(best) ? (float)best : 0.0f;
        return 0;
    });
}

// ---- video input --------------------------------------------------------------------------

namespace {
// Whether a video's frames are within DCV_MAX_PICTURE_PIXELS, as its stream declares them (a
// small file of huge Motion JPEG frames would otherwise be decoded at gigabytes a frame).
bool frame_size_allowed(dcv_capture &capture) {
    const double width = capture.capture.get(cv::CAP_PROP_FRAME_WIDTH), height = capture.capture.get(cv::CAP_PROP_FRAME_HEIGHT);
    return width * height <= double(DCV_MAX_PICTURE_PIXELS);
}

std::string frame_size_refusal() {
    return "its frames are larger than " + std::to_string(DCV_MAX_PICTURE_PIXELS / 1048576) + " megapixels";
}
}  // namespace

dcv_capture *dcv_capture_open(const char *path, dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_capture *>(status, nullptr, [&]() -> dcv_capture * {
        auto *capture = new dcv_capture();
        if (!capture->capture.open(path, cv::CAP_FFMPEG) ||
            capture->capture.get(cv::CAP_PROP_FRAME_WIDTH) <= 0) {
            delete capture;
            set_status(status, DCV_ERR_OPEN, "not a video FFmpeg can decode");
            return nullptr;
        }
        if (!frame_size_allowed(*capture)) {
            delete capture;
            set_status(status, DCV_ERR_OPEN, frame_size_refusal());
            return nullptr;
        }
        return capture;
    });
}

dcv_capture *dcv_capture_open_stream(const char *url, int open_timeout_ms, int read_timeout_ms, dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_capture *>(status, nullptr, [&]() -> dcv_capture * {
        auto *capture = new dcv_capture();
        const std::vector<int> params{cv::CAP_PROP_OPEN_TIMEOUT_MSEC, open_timeout_ms, cv::CAP_PROP_READ_TIMEOUT_MSEC,
                                      read_timeout_ms};
        if (!capture->capture.open(url, cv::CAP_FFMPEG, params) || capture->capture.get(cv::CAP_PROP_FRAME_WIDTH) <= 0) {
            delete capture;
            set_status(status, DCV_ERR_OPEN,
                       "no stream FFmpeg can decode answered (waited up to " + std::to_string(open_timeout_ms) + " ms)");
            return nullptr;
        }
        if (!frame_size_allowed(*capture)) {
            delete capture;
            set_status(status, DCV_ERR_OPEN, frame_size_refusal());
            return nullptr;
        }
        // The codec's tag, or (FFmpeg's MJPEG over HTTP, which has none) its name's first letters.
        const int fourcc = (int)capture->capture.get(cv::CAP_PROP_FOURCC);
        if (fourcc == cv::VideoWriter::fourcc('M', 'J', 'P', 'G') || fourcc == cv::VideoWriter::fourcc('m', 'j', 'p', 'e')) {
            capture->jpeg_pictures = capture->capture.set(cv::CAP_PROP_FORMAT, -1);
        }
        return capture;
    });
}

void dcv_capture_destroy(dcv_capture *capture) { delete capture; }

int dcv_image_decode_stream_picture(const uint8_t *bytes, size_t count, dcv_image *into) {
    if (into == nullptr) return 0;
    quiet_libraries();
    into->mat.release();
    if (bytes == nullptr || !is_jpeg(bytes, count) || !picture_size_allowed(bytes, count)) return 0;
    try {
        // imdecode takes a Mat header over the bytes (no copy) and only reads them.
        cv::Mat packet(1, int(std::min(count, size_t(INT_MAX))), CV_8UC1, const_cast<uint8_t *>(bytes));
        cv::imdecode(packet, cv::IMREAD_COLOR, &into->mat);
    } catch (const cv::Exception &) {
        into->mat.release();
    } catch (const std::bad_alloc &) {
        into->mat.release();
    }
    return into->mat.empty() ? 0 : 1;
}

dcv_capture_info dcv_capture_get_info(const dcv_capture *capture) {
    dcv_capture_info info{0, 0, 0.0, 0};
    if (capture == nullptr) return info;
    guarded<int>(nullptr, 0, [&] {
        auto &c = const_cast<cv::VideoCapture &>(capture->capture);
        info.width = (int)c.get(cv::CAP_PROP_FRAME_WIDTH);
        info.height = (int)c.get(cv::CAP_PROP_FRAME_HEIGHT);
        info.fps = c.get(cv::CAP_PROP_FPS);
        info.frame_count = (long)c.get(cv::CAP_PROP_FRAME_COUNT);
        return 0;
    });
    return info;
}

int dcv_capture_read(dcv_capture *capture, dcv_image *into, double *position_ms,
                     dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (capture == nullptr || into == nullptr) {
            set_status(status, DCV_ERR_ARGUMENT, "no capture or destination");
            return -1;
        }
        if (capture->jpeg_pictures) {
            // A picture that does not decode (cut short, or larger than DCV_MAX_PICTURE_PIXELS
            // says: imdecode refuses it before allocating) is passed over for the next.
            for (int tries = 0; tries < 8; ++tries) {
                cv::Mat packet;
                if (!capture->capture.read(packet) || packet.empty()) return 0;
                if (dcv_image_decode_stream_picture(packet.ptr<uint8_t>(), packet.total() * packet.elemSize(), into) == 1) {
                    if (position_ms) *position_ms = capture->capture.get(cv::CAP_PROP_POS_MSEC);
                    return 1;
                }
            }
            set_status(status, DCV_ERR_ARGUMENT, "the stream's pictures do not decode as JPEG");
            return -1;
        }
        if (!capture->capture.read(into->mat) || into->mat.empty()) return 0;
        if (double(into->mat.cols) * into->mat.rows > double(DCV_MAX_PICTURE_PIXELS)) {
            into->mat.release();
            set_status(status, DCV_ERR_READ, frame_size_refusal());
            return -1;
        }
        if (position_ms) *position_ms = capture->capture.get(cv::CAP_PROP_POS_MSEC);
        return 1;
    });
}

int dcv_capture_skip(dcv_capture *capture, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (capture == nullptr) {
            set_status(status, DCV_ERR_ARGUMENT, "no capture");
            return -1;
        }
        return capture->capture.grab() ? 1 : 0;
    });
}

// ---- preview window -----------------------------------------------------------------------

int dcv_window_show(const char *title, const dcv_image *image, int wait_ms, dcv_status *status) {
    return guarded<int>(status, -2, [&]() -> int {
        if (!usable(image, status)) return -2;
        cv::imshow(title, image->mat);
        return cv::waitKey(wait_ms);
    });
}

void dcv_window_close(const char *title) {
    guarded<int>(nullptr, 0, [&] {
        cv::destroyWindow(title);
        return 0;
    });
}

// ---- video output -------------------------------------------------------------------------

dcv_writer *dcv_writer_open(const char *path, const char *fourcc, double fps, int width,
                            int height, dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_writer *>(status, nullptr, [&]() -> dcv_writer * {
        if (fourcc == nullptr || std::strlen(fourcc) != 4 || fps <= 0 || width <= 0 ||
            height <= 0) {
            set_status(status, DCV_ERR_ARGUMENT, "bad writer parameters");
            return nullptr;
        }
        auto *writer = new dcv_writer();
        int code = cv::VideoWriter::fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]);
        if (!writer->writer.open(path, cv::CAP_FFMPEG, code, fps, cv::Size(width, height), true)) {
            delete writer;
            set_status(status, DCV_ERR_WRITE, "could not open video writer");
            return nullptr;
        }
        return writer;
    });
}

int dcv_writer_write(dcv_writer *writer, const dcv_image *image, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (writer == nullptr || !usable(image, status)) return -1;
        writer->writer.write(image->mat);
        return 0;
    });
}

void dcv_writer_destroy(dcv_writer *writer) {
    if (writer == nullptr) return;
    guarded<int>(nullptr, 0, [&] {
        writer->writer.release();
        return 0;
    });
    delete writer;
}

// ---- SSD face detector --------------------------------------------------------------------

dcv_ssd *dcv_ssd_open_caffe(const char *prototxt_path, const char *model_path,
                            dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_ssd *>(status, nullptr, [&]() -> dcv_ssd * {
        auto *ssd = new dcv_ssd();
        ssd->net = cv::dnn::readNetFromCaffe(prototxt_path, model_path);
        if (ssd->net.empty()) {
            delete ssd;
            set_status(status, DCV_ERR_OPEN, "could not load the Caffe model");
            return nullptr;
        }
        return ssd;
    });
}

void dcv_ssd_destroy(dcv_ssd *net) { delete net; }

int dcv_ssd_detect(dcv_ssd *net, const dcv_image *image, int input_width, int input_height,
                   double mean_b, double mean_g, double mean_r, float min_score, dcv_box *out,
                   int capacity, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (net == nullptr || !usable(image, status)) return -1;
        cv::dnn::blobFromImage(image->mat, net->blob, 1.0, cv::Size(input_width, input_height),
                               cv::Scalar(mean_b, mean_g, mean_r), false, false);
        net->net.setInput(net->blob);
        cv::Mat result = net->net.forward();  // [1, 1, N, 7]
        cv::Mat rows(result.size[2], result.size[3], CV_32F, result.ptr<float>());
        const float w = (float)image->mat.cols, h = (float)image->mat.rows;
        int n = 0;
        for (int i = 0; i < rows.rows && n < capacity; ++i) {
            const float *row = rows.ptr<float>(i);
            float score = row[2];
            if (score < min_score) continue;
            float x1 = row[3] * w, y1 = row[4] * h, x2 = row[5] * w, y2 = row[6] * h;
            if (x2 <= x1 || y2 <= y1) continue;
            out[n++] = dcv_box{x1, y1, x2 - x1, y2 - y1, score};
        }
        return n;
    });
}

// ---- person check ------------------------------------------------------------------------

dcv_person_net *dcv_person_net_open(const char *graph_path, const char *text_graph_path,
                                    dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_person_net *>(status, nullptr, [&]() -> dcv_person_net * {
        auto *person = new dcv_person_net();
        person->net = cv::dnn::readNetFromTensorflow(graph_path, text_graph_path);
        if (person->net.empty()) {
            delete person;
            set_status(status, DCV_ERR_OPEN, "could not load the TensorFlow graph");
            return nullptr;
        }
        return person;
    });
}

void dcv_person_net_destroy(dcv_person_net *net) { delete net; }

int dcv_person_net_detect(dcv_person_net *net, const dcv_image *image, int input_size,
                          float min_score, dcv_box *out, int capacity, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (net == nullptr || !usable(image, status)) return -1;
        if (input_size < 32) {
            set_status(status, DCV_ERR_ARGUMENT, "an input under 32 px");
            return -1;
        }
        cv::dnn::blobFromImage(image->mat, net->blob, 1.0 / 127.5, cv::Size(input_size, input_size),
                               cv::Scalar(127.5, 127.5, 127.5), true, false);
        net->net.setInput(net->blob);
        cv::Mat result = net->net.forward();  // [1, 1, N, 7]
        const float w = (float)image->mat.cols, h = (float)image->mat.rows;
        int n = 0;
        for (int r = 0; r < result.size[2] && n < capacity; ++r) {
            const float *row = result.ptr<float>(0, 0, r);
            if (row[2] < min_score) continue;
            float x1 = row[3] * w, y1 = row[4] * h, x2 = row[5] * w, y2 = row[6] * h;
            if (x2 <= x1 || y2 <= y1) continue;
            out[n++] = dcv_box{x1, y1, x2 - x1, y2 - y1, row[2]};
        }
        return n;
    });
}

static float overlap(const cv::Rect2f &a, const cv::Rect2f &b) {
    float shared = (a & b).area();
    float all = a.area() + b.area() - shared;
    return all > 0 ? shared / all : 0;
}

int dcv_person_net_score(dcv_person_net *net, const dcv_image *image, const float *boxes,
                         int count, int input_size, float context, float min_overlap,
                         float *scores, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (net == nullptr || !usable(image, status)) return -1;
        if (count <= 0) return 0;
        if (boxes == nullptr || scores == nullptr || input_size < 32 || !(context > 0)) {
            set_status(status, DCV_ERR_ARGUMENT, "no boxes, no scores, an input under 32 px or no context");
            return -1;
        }
        const cv::Mat &mat = image->mat;
        const cv::Rect whole(0, 0, mat.cols, mat.rows);
        // One crop per forward pass: the input keeps one shape from call to call (OpenCV sets a
        // network up again for every new input shape, which costs more than the pass itself).
        for (int i = 0; i < count; ++i) {
            const float *b = boxes + 4 * i;
            float side = context * std::max(b[2], b[3]);
            float cx = b[0] + b[2] / 2, cy = b[1] + b[3] / 2;
            cv::Rect area = cv::Rect(cvFloor(cx - side / 2), cvFloor(cy - side / 2), cvCeil(side), cvCeil(side)) & whole;
            if (area.width < 2 || area.height < 2) area = whole;  // a box outside the image: look at all of it
            cv::dnn::blobFromImage(mat(area), net->blob, 1.0 / 127.5, cv::Size(input_size, input_size),
                                   cv::Scalar(127.5, 127.5, 127.5), true, false);
            net->net.setInput(net->blob);
            cv::Mat result = net->net.forward();  // [1, 1, N, 7]: _, class, score, x1, y1, x2, y2 (0...1 of the crop)
            scores[i] = 0;
            const cv::Rect2f candidate(b[0], b[1], b[2], b[3]);
            for (int r = 0; r < result.size[2]; ++r) {
                const float *row = result.ptr<float>(0, 0, r);
                cv::Rect2f found(area.x + row[3] * area.width, area.y + row[4] * area.height,
                                 (row[5] - row[3]) * area.width, (row[6] - row[4]) * area.height);
                if (overlap(found, candidate) >= min_overlap) scores[i] = std::max(scores[i], row[2]);
            }
        }
        return 0;
    });
}

// ---- cascade classifier -------------------------------------------------------------------

dcv_cascade *dcv_cascade_open(const char *path, dcv_status *status) {
    return guarded<dcv_cascade *>(status, nullptr, [&]() -> dcv_cascade * {
        auto *cascade = new dcv_cascade();
        if (!cascade->classifier.load(path) || cascade->classifier.empty()) {
            delete cascade;
            set_status(status, DCV_ERR_OPEN, "not a cascade classifier file");
            return nullptr;
        }
        return cascade;
    });
}

void dcv_cascade_destroy(dcv_cascade *cascade) { delete cascade; }

int dcv_cascade_detect(dcv_cascade *cascade, const dcv_image *gray, double scale_factor,
                       int min_neighbors, int min_width, int min_height, int max_width,
                       int max_height, dcv_box *out, int capacity, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (cascade == nullptr || !usable(gray, status)) return -1;
        std::vector<cv::Rect> rects;
        std::vector<int> neighbours;
        cascade->classifier.detectMultiScale(gray->mat, rects, neighbours, scale_factor,
                                             min_neighbors, 0, cv::Size(min_width, min_height),
                                             cv::Size(max_width, max_height));
        std::vector<double> scores(neighbours.begin(), neighbours.end());
        return copy_boxes(rects, scores, out, capacity);
    });
}

// ---- HOG people detector ------------------------------------------------------------------

namespace {
dcv_hog *hog_with(cv::HOGDescriptor descriptor) {
    auto *hog = new dcv_hog();
    hog->descriptor = std::move(descriptor);
    hog->scorer = std::make_unique<dockcv::HogScorer>(hog->descriptor);
    return hog;
}

// Scores the windows of `image` whose corner is on the stride's grid, as
// HOGDescriptor::detect(image, ..., padding 8) does: with DockTrack's scorer when it computes
// this descriptor's layout (unless told not to), else with HOGDescriptor's own.
void hog_windows(const dcv_hog *hog, const cv::Mat &image, double hit_threshold, int stride,
                 std::vector<cv::Point> &hits, std::vector<double> &scores) {
    if (!hog->opencv_scoring && hog->scorer->handles(stride))
        hog->scorer->detect(image, hit_threshold, stride, hits, scores);
    else
        hog->descriptor.detect(image, hits, scores, hit_threshold, cv::Size(stride, stride), cv::Size(8, 8));
}

// One picture's part in a search: its pyramid levels (while a level still holds a window, at
// most 64, or the first `max_levels` when above 0) and where on it to look (4 ints each, its
// pixels; nullptr: all of it).
struct HogPicture {
    const cv::Mat *img;
    const int *regions;
    int region_count;
    std::vector<double> levels;

    HogPicture(const cv::Mat &picture, const int *regions_, int count, cv::Size window, double scale, int max_levels)
        : img(&picture), regions(regions_), region_count(count) {
        const size_t limit = max_levels > 0 ? std::min(max_levels, 64) : 64;
        for (double s = 1; levels.size() < limit; s *= scale) {
            levels.push_back(s);
            if (cvRound(picture.cols / s) < window.width || cvRound(picture.rows / s) < window.height) break;
        }
        if (regions == nullptr) { whole[2] = picture.cols; whole[3] = picture.rows; regions = whole; region_count = 1; }
    }
    HogPicture(const HogPicture &) = delete;
    int whole[4] = {0, 0, 0, 0};
};

// A window found: its box on its picture (pixels), score, picture and level.
struct HogHit {
    cv::Rect box;
    double score;
    int picture, level;
};

// detectMultiScale's windows over each of `pictures` at its levels, inside its regions: the same
// levels and window grid as the whole search, each window once however many regions reach it.
// All the levels of all the pictures share one parallel loop.
std::vector<HogHit> hog_hits(const dcv_hog *hog, const std::vector<const HogPicture *> &pictures, double hit_threshold,
                             int win_stride) {
    const cv::Size window = hog->descriptor.winSize;
    std::vector<std::pair<int, int>> jobs;
    for (int p = 0; p < (int)pictures.size(); ++p)
        for (int level = 0; level < (int)pictures[p]->levels.size(); ++level) jobs.push_back({p, level});
    std::vector<HogHit> found;
    std::mutex mutex;
    cv::parallel_for_(cv::Range(0, (int)jobs.size()), [&](const cv::Range &range) {
        for (int job = range.start; job < range.end; ++job) {
            const HogPicture &picture = *pictures[jobs[job].first];
            const cv::Mat &img = *picture.img;
            const double s = picture.levels[jobs[job].second];
            const cv::Size size(cvRound(img.cols / s), cvRound(img.rows / s));
            if (size.width < window.width || size.height < window.height) continue;
            cv::Mat smaller;
            if (size == img.size()) smaller = img;
            else cv::resize(img, smaller, size, 0, 0, cv::INTER_LINEAR_EXACT);
            const cv::Rect whole(0, 0, size.width, size.height);
            std::set<std::pair<int, int>> seen;
            for (int r = 0; r < picture.region_count; ++r) {
                const int *q = picture.regions + 4 * r;
                // The region at this level, its corner on the stride's grid (as the whole
                // search's windows are), at least a window large, inside the level.
                int x0 = (int)std::floor(q[0] / s), y0 = (int)std::floor(q[1] / s);
                int x1 = (int)std::ceil((q[0] + q[2]) / s), y1 = (int)std::ceil((q[1] + q[3]) / s);
                x0 = std::max(0, x0 - x0 % win_stride);
                y0 = std::max(0, y0 - y0 % win_stride);
                x1 = std::min(size.width, std::max(x1, x0 + window.width));
                y1 = std::min(size.height, std::max(y1, y0 + window.height));
                const cv::Rect area = cv::Rect(x0, y0, x1 - x0, y1 - y0) & whole;
                if (area.width < window.width || area.height < window.height) continue;
                std::vector<cv::Point> hits;
                std::vector<double> scores;
                hog_windows(hog, smaller(area), hit_threshold, win_stride, hits, scores);
                std::lock_guard<std::mutex> lock(mutex);
                for (size_t i = 0; i < hits.size(); ++i) {
                    const cv::Point at = hits[i] + area.tl();
                    if (!seen.insert({at.x, at.y}).second) continue;
                    found.push_back({cv::Rect(cvRound(at.x * s), cvRound(at.y * s), cvRound(window.width * s),
                                              cvRound(window.height * s)),
                                     i < scores.size() ? scores[i] : 0.0, jobs[job].first, jobs[job].second});
                }
            }
        }
    });
    return found;
}

// detectMultiScale's grouping (threshold 2, eps 0.2) and clipping to the picture (`size`): the
// boxes written to `out`, their count returned.
int grouped_boxes(const dcv_hog *hog, std::vector<cv::Rect> rects, std::vector<double> weights, cv::Size size,
                  dcv_box *out, int capacity) {
    hog->descriptor.groupRectangles(rects, weights, 2, 0.2);
    // As detectMultiScale's clipObjects: cut to the image, drop what falls outside.
    const cv::Rect whole(0, 0, size.width, size.height);
    std::vector<cv::Rect> clipped;
    std::vector<double> kept;
    for (size_t i = 0; i < rects.size(); ++i) {
        const cv::Rect r = rects[i] & whole;
        if (r.area() > 0) { clipped.push_back(r); kept.push_back(i < weights.size() ? weights[i] : 0.0); }
    }
    return copy_boxes(clipped, kept, out, capacity);
}

// detectMultiScale's search, limited to `regions` (4 ints each, image pixels; nullptr: all of
// it): the same pyramid levels (while a level still holds a window, at most 64), window grid,
// grouping (threshold 2, eps 0.2) and clipping to the image; the first `max_levels` levels only
// when it is above 0.
int hog_search(const dcv_hog *hog, const cv::Mat &img, const int *regions, int region_count, double hit_threshold,
               int win_stride, double scale, int max_levels, dcv_box *out, int capacity) {
    const HogPicture picture(img, regions, region_count, hog->descriptor.winSize, scale, max_levels);
    std::vector<cv::Rect> rects;
    std::vector<double> weights;
    for (const HogHit &hit : hog_hits(hog, {&picture}, hit_threshold, win_stride)) {
        rects.push_back(hit.box);
        weights.push_back(hit.score);
    }
    return grouped_boxes(hog, std::move(rects), std::move(weights), img.size(), out, capacity);
}

// detectMultiScale corrupts the heap (or loops) on an image smaller than its window.
bool holds_window(const dcv_hog *hog, const dcv_image *image, dcv_status *status) {
    const cv::Size window = hog->descriptor.winSize;
    if (image->mat.cols >= window.width && image->mat.rows >= window.height) return true;
    set_status(status, DCV_ERR_ARGUMENT, "image smaller than the HOG window");
    return false;
}
}  // namespace

dcv_hog *dcv_hog_create_people(dcv_status *status) {
    return guarded<dcv_hog *>(status, nullptr, [&]() -> dcv_hog * {
        cv::HOGDescriptor descriptor;
        descriptor.setSVMDetector(cv::HOGDescriptor::getDefaultPeopleDetector());
        return hog_with(std::move(descriptor));
    });
}

dcv_hog *dcv_hog_create_daimler(dcv_status *status) {
    return guarded<dcv_hog *>(status, nullptr, [&]() -> dcv_hog * {
        cv::HOGDescriptor descriptor(cv::Size(48, 96), cv::Size(16, 16), cv::Size(8, 8), cv::Size(8, 8), 9);
        descriptor.setSVMDetector(cv::HOGDescriptor::getDaimlerPeopleDetector());
        return hog_with(std::move(descriptor));
    });
}

void dcv_hog_destroy(dcv_hog *hog) { delete hog; }

void dcv_hog_set_opencv_scoring(dcv_hog *hog, int on) {
    if (hog != nullptr) hog->opencv_scoring = on != 0;
}

int dcv_hog_detect(dcv_hog *hog, const dcv_image *image, double hit_threshold, int win_stride,
                   double scale, int max_levels, dcv_box *out, int capacity, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (hog == nullptr || !usable(image, status)) return -1;
        if (win_stride < 1 || !(scale > 1)) {
            set_status(status, DCV_ERR_ARGUMENT, "bad stride or scale");
            return -1;
        }
        if (!holds_window(hog, image, status)) return -1;
        if (!hog->opencv_scoring)
            return hog_search(hog, image->mat, nullptr, 0, hit_threshold, win_stride, scale, max_levels, out, capacity);
        std::vector<cv::Rect> rects;
        std::vector<double> weights;
        hog->descriptor.nlevels = max_levels > 0 ? std::min(max_levels, 64) : 64;
        hog->descriptor.detectMultiScale(image->mat, rects, weights, hit_threshold,
                                         cv::Size(win_stride, win_stride), cv::Size(8, 8), scale,
                                         2.0, false);
        return copy_boxes(rects, weights, out, capacity);
    });
}

int dcv_hog_detect_regions(dcv_hog *hog, const dcv_image *image, const int *regions,
                           int region_count, double hit_threshold, int win_stride, double scale,
                           int max_levels, dcv_box *out, int capacity, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (hog == nullptr || !usable(image, status)) return -1;
        if (region_count < 0 || (region_count > 0 && regions == nullptr) || win_stride < 1 || !(scale > 1)) {
            set_status(status, DCV_ERR_ARGUMENT, "bad regions, stride or scale");
            return -1;
        }
        if (region_count == 0) return 0;
        return hog_search(hog, image->mat, regions, region_count, hit_threshold, win_stride, scale, max_levels, out, capacity);
    });
}

int dcv_hog_detect_with_smaller(dcv_hog *hog, const dcv_image *image, const dcv_image *enlarged, int enlarged_levels,
                                const int *regions, int region_count, const int *enlarged_regions,
                                int enlarged_region_count, double hit_threshold, int win_stride, double scale,
                                dcv_box *out, int capacity, int *count, dcv_box *small_out, int small_capacity,
                                dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (hog == nullptr || !usable(image, status) || !usable(enlarged, status)) return -1;
        if (enlarged_levels < 1 || region_count < 0 || enlarged_region_count < 0 || count == nullptr ||
            (regions == nullptr) != (enlarged_regions == nullptr) || win_stride < 1 || !(scale > 1) ||
            image->mat.channels() != enlarged->mat.channels() || enlarged->mat.cols < image->mat.cols ||
            enlarged->mat.rows < image->mat.rows) {
            set_status(status, DCV_ERR_ARGUMENT, "bad pictures, levels, regions, stride or scale");
            return -1;
        }
        if (!holds_window(hog, image, status)) return -1;
        *count = 0;
        if (regions != nullptr && (region_count == 0 || enlarged_region_count == 0)) return 0;
        const cv::Size window = hog->descriptor.winSize;
        const HogPicture main(image->mat, regions, region_count, window, scale, 0);
        const HogPicture larger(enlarged->mat, enlarged_regions, enlarged_region_count, window, scale, enlarged_levels);
        std::vector<cv::Rect> rects, small_rects;
        std::vector<double> weights, small_weights;
        // The main picture's boxes in the enlarged picture's pixels.
        const double sx = (double)enlarged->mat.cols / image->mat.cols, sy = (double)enlarged->mat.rows / image->mat.rows;
        for (const HogHit &hit : hog_hits(hog, {&main, &larger}, hit_threshold, win_stride)) {
            if (hit.picture == 1) {
                small_rects.push_back(hit.box);
                small_weights.push_back(hit.score);
                continue;
            }
            rects.push_back(hit.box);
            weights.push_back(hit.score);
            if (hit.level == 0) {
                small_rects.emplace_back(cvRound(hit.box.x * sx), cvRound(hit.box.y * sy), cvRound(hit.box.width * sx),
                                         cvRound(hit.box.height * sy));
                small_weights.push_back(hit.score);
            }
        }
        *count = grouped_boxes(hog, std::move(rects), std::move(weights), image->mat.size(), out, capacity);
        return grouped_boxes(hog, std::move(small_rects), std::move(small_weights), enlarged->mat.size(), small_out,
                             small_capacity);
    });
}

// ---- face landmarks -----------------------------------------------------------------------

int dcv_onet_input(const dcv_image *image, float x, float y, float width, float height, float *out,
                   float *square, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (!usable(image, status) || out == nullptr || square == nullptr || width < 2 || height < 2 ||
            image->mat.channels() != 3) {
            if (status && status->code == DCV_OK) set_status(status, DCV_ERR_ARGUMENT, "bad landmark request");
            return -1;
        }
        const float side = std::max(width, height);
        const int left = (int)(x + width / 2 - side / 2), top = (int)(y + height / 2 - side / 2);
        cv::Mat small, rgb, scaled;
        shrunk_region(image->mat, cv::Rect(left, top, (int)side, (int)side), cv::Size(48, 48), false, small);
        cv::cvtColor(small, rgb, cv::COLOR_BGR2RGB);
        rgb.convertTo(scaled, CV_32FC3, 0.0078125, -127.5 * 0.0078125);
        cv::Mat swapped(48, 48, CV_32FC3, out);  // rows = x, cols = y: the model's W x H x C layout
        cv::transpose(scaled, swapped);
        square[0] = (float)left;
        square[1] = (float)top;
        square[2] = side;
        return 0;
    });
}

// ---- MTCNN cascade -------------------------------------------------------------------------

namespace {

struct FaceCandidate {
    float x1, y1, x2, y2, score;
    float reg[4];
};

// The networks' input: RGB, (x - 127.5) / 128, N x W x H x C (the image transposed). Takes an
// 8-bit RGB image that is already transposed (W rows of H pixels), so this is only the scaling,
// written straight into the blob.
cv::Mat mtcnn_input(const cv::Mat &rgb8_transposed) {
    int dims[4] = {1, rgb8_transposed.rows, rgb8_transposed.cols, 3};
    cv::Mat blob(4, dims, CV_32F);
    cv::Mat scaled(rgb8_transposed.rows, rgb8_transposed.cols, CV_32FC3, blob.ptr<float>());
    rgb8_transposed.convertTo(scaled, CV_32FC3, 0.0078125, -127.5 * 0.0078125);
    return blob;
}

// An 8-bit BGR picture as the networks look at it: RGB, transposed (x and y swap places).
cv::Mat rgb_transposed(const cv::Mat &bgr) {
    cv::Mat rgb;
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    return rgb.t();
}

float iou(const FaceCandidate &a, const FaceCandidate &b, bool over_smaller) {
    const float w = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1) + 1);
    const float h = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1) + 1);
    const float inter = w * h;
    const float area_a = (a.x2 - a.x1 + 1) * (a.y2 - a.y1 + 1), area_b = (b.x2 - b.x1 + 1) * (b.y2 - b.y1 + 1);
    return inter / (over_smaller ? std::min(area_a, area_b) : area_a + area_b - inter);
}

std::vector<FaceCandidate> suppress(std::vector<FaceCandidate> boxes, float threshold, bool over_smaller) {
    std::sort(boxes.begin(), boxes.end(), [](const FaceCandidate &a, const FaceCandidate &b) { return a.score > b.score; });
    std::vector<FaceCandidate> kept;
    for (const auto &box : boxes) {
        bool overlaps = false;
        for (const auto &k : kept) if (iou(box, k, over_smaller) > threshold) { overlaps = true; break; }
        if (!overlaps) kept.push_back(box);
    }
    return kept;
}

// Moves each box by its regression (offsets in box widths and heights).
void refine(std::vector<FaceCandidate> &boxes, bool plus_one) {
    for (auto &b : boxes) {
        const float w = b.x2 - b.x1 + (plus_one ? 1 : 0), h = b.y2 - b.y1 + (plus_one ? 1 : 0);
        b = {b.x1 + b.reg[0] * w, b.y1 + b.reg[1] * h, b.x2 + b.reg[2] * w, b.y2 + b.reg[3] * h, b.score, {0, 0, 0, 0}};
    }
}

// Each box made square around its centre (the next network looks at squares).
void squared(std::vector<FaceCandidate> &boxes) {
    for (auto &b : boxes) {
        const float w = b.x2 - b.x1, h = b.y2 - b.y1, side = std::max(w, h);
        b.x1 = b.x1 + w * 0.5f - side * 0.5f;
        b.y1 = b.y1 + h * 0.5f - side * 0.5f;
        b.x2 = b.x1 + side;
        b.y2 = b.y1 + side;
    }
}

// One picture of the pyramid, shrunk by `sx` horizontally and `sy` vertically: the full-size
// picture first, as given (8-bit BGR, `transposed` false), then smaller ones as the networks
// look at them (8-bit RGB, transposed). Only the crops cut from the full-size picture are turned
// and transposed, not the whole frame: at 1280x720 that was 2 of the 13 ms of a search for
// close-up faces.
struct PyramidLevel {
    cv::Mat picture;
    float sx, sy;
    bool transposed;
};

// Runs `net` on size x size crops of the boxes; keeps those whose face probability reaches
// `threshold`, with their regression (output `reg_name`) and probability (`prob_name`). Each
// crop is cut from the smallest level of `pyramid` where the box is still `size` px or more: a
// close-up face's box is shrunk from a few hundred pixels, not from the full picture's.
std::vector<FaceCandidate> stage(cv::dnn::Net &net, const std::vector<PyramidLevel> &pyramid, const std::vector<FaceCandidate> &boxes, int size,
                                 const char *reg_name, const char *prob_name, float threshold) {
    std::vector<FaceCandidate> kept;
    if (boxes.empty()) return kept;
    const int n = (int)boxes.size();
    int dims[4] = {n, size, size, 3};
    cv::Mat batch(4, dims, CV_32F);
    for (int i = 0; i < n; ++i) {
        const auto &b = boxes[i];
        const float bw = b.x2 - b.x1 + 1, bh = b.y2 - b.y1 + 1;
        const PyramidLevel *from = &pyramid.front();
        for (const auto &level : pyramid) {
            if (std::min(bw * level.sx, bh * level.sy) < size) break;
            from = &level;
        }
        const int x = (int)std::floor(b.x1 * from->sx), y = (int)std::floor(b.y1 * from->sy);
        const int w = std::max(1, (int)std::lround(bw * from->sx)), h = std::max(1, (int)std::lround(bh * from->sy));
        cv::Mat small;
        if (from->transposed) {
            shrunk_region(from->picture, cv::Rect(y, x, h, w), cv::Size(size, size), false, small);
        } else {
            cv::Mat shrunk;
            shrunk_region(from->picture, cv::Rect(x, y, w, h), cv::Size(size, size), false, shrunk);
            small = rgb_transposed(shrunk);
        }
        cv::Mat slot(size, size, CV_32FC3, batch.ptr<float>(i));
        small.convertTo(slot, CV_32FC3, 0.0078125, -127.5 * 0.0078125);
    }
    net.setInput(batch);
    std::vector<cv::Mat> outs;
    net.forward(outs, std::vector<cv::String>{reg_name, prob_name});
    const cv::Mat reg = outs[0].reshape(1, n), prob = outs[1].reshape(1, n);
    for (int i = 0; i < n; ++i) {
        const float p = prob.at<float>(i, 1);
        if (p < threshold) continue;
        FaceCandidate b = boxes[i];
        b.score = p;
        for (int k = 0; k < 4; ++k) b.reg[k] = reg.at<float>(i, k);
        kept.push_back(b);
    }
    return kept;
}

}  // namespace

dcv_mtcnn *dcv_mtcnn_open(const char *pnet_path, const char *rnet_path, const char *onet_path, dcv_status *status) {
    quiet_libraries();
    return guarded<dcv_mtcnn *>(status, nullptr, [&]() -> dcv_mtcnn * {
        auto *m = new dcv_mtcnn();
        m->pnet = cv::dnn::readNetFromONNX(pnet_path);
        m->rnet = cv::dnn::readNetFromONNX(rnet_path);
        m->onet = cv::dnn::readNetFromONNX(onet_path);
        if (m->pnet.empty() || m->rnet.empty() || m->onet.empty()) {
            delete m;
            set_status(status, DCV_ERR_OPEN, "could not load the MTCNN ONNX models");
            return nullptr;
        }
        return m;
    });
}

void dcv_mtcnn_destroy(dcv_mtcnn *net) { delete net; }

int dcv_mtcnn_detect(dcv_mtcnn *net, const dcv_image *image, float min_face, const float *thresholds, dcv_box *out,
                     int capacity, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (net == nullptr || !usable(image, status) || out == nullptr || thresholds == nullptr || capacity < 0 ||
            !(min_face >= 12) || image->mat.channels() != 3) {
            if (status && status->code == DCV_OK) set_status(status, DCV_ERR_ARGUMENT, "bad MTCNN request");
            return -1;
        }
        // The networks look at the picture transposed, in RGB. The first level is shrunk from the
        // frame and then turned and transposed, each later one shrunk from the one before (a
        // third of the cost of shrinking the whole frame for every level, at 1280x720).
        const int cols = image->mat.cols, rows = image->mat.rows;
        // Proposals: P-Net over the pyramid, a 12-pixel window with stride 2 at each scale.
        std::vector<FaceCandidate> proposals;
        const int shortest = std::min(cols, rows);
        std::vector<PyramidLevel> pyramid{{image->mat, 1.f, 1.f, false}};
        for (float scale = 12.f / min_face; shortest * scale >= 12; scale *= 0.709f) {
            const int w = (int)std::ceil(cols * scale), h = (int)std::ceil(rows * scale);
            cv::Mat scaled;
            if (pyramid.size() == 1) {
                cv::Mat shrunk;
                if (w == cols && h == rows) shrunk = image->mat;
                else cv::resize(image->mat, shrunk, cv::Size(w, h), 0, 0, cv::INTER_AREA);
                scaled = rgb_transposed(shrunk);
            } else {
                cv::resize(pyramid.back().picture, scaled, cv::Size(h, w), 0, 0, cv::INTER_AREA);
            }
            pyramid.push_back({scaled, (float)w / cols, (float)h / rows, true});
            net->pnet.setInput(mtcnn_input(scaled));
            std::vector<cv::Mat> outs;
            net->pnet.forward(outs, std::vector<cv::String>{"conv2d_4", "softmax"});
            // Outputs are 1 x W' x H' x C: indexed by the cell's x, then its y.
            const int cw = outs[1].size[1], ch = outs[1].size[2];
            const float *reg = outs[0].ptr<float>(), *prob = outs[1].ptr<float>();
            std::vector<FaceCandidate> at_scale;
            for (int cx = 0; cx < cw; ++cx) {
                for (int cy = 0; cy < ch; ++cy) {
                    const int cell = cx * ch + cy;
                    const float p = prob[cell * 2 + 1];
                    if (p < thresholds[0]) continue;
                    FaceCandidate b{std::trunc((2 * cx + 1) / scale), std::trunc((2 * cy + 1) / scale),
                                    std::trunc((2 * cx + 12) / scale), std::trunc((2 * cy + 12) / scale), p,
                                    {reg[cell * 4], reg[cell * 4 + 1], reg[cell * 4 + 2], reg[cell * 4 + 3]}};
                    at_scale.push_back(b);
                }
            }
            at_scale = suppress(at_scale, 0.5f, false);
            proposals.insert(proposals.end(), at_scale.begin(), at_scale.end());
        }
        proposals = suppress(proposals, 0.7f, false);
        refine(proposals, false);
        squared(proposals);
        // Refinement: R-Net on 24x24 crops.
        auto refined = stage(net->rnet, pyramid, proposals, 24, "dense_2", "softmax_1", thresholds[1]);
        refined = suppress(refined, 0.7f, false);
        refine(refined, true);
        squared(refined);
        // Output: O-Net on 48x48 crops.
        auto faces = stage(net->onet, pyramid, refined, 48, "dense_5", "softmax_2", thresholds[2]);
        refine(faces, true);
        faces = suppress(faces, 0.7f, true);
        int count = 0;
        for (const auto &f : faces) {
            if (count >= capacity) break;
            out[count++] = dcv_box{f.x1, f.y1, f.x2 - f.x1 + 1, f.y2 - f.y1 + 1, f.score};
        }
        return count;
    });
}

// ---- single-object visual tracker ---------------------------------------------------------

dcv_tracker *dcv_tracker_create(int kind, dcv_status *status) {
    return guarded<dcv_tracker *>(status, nullptr, [&]() -> dcv_tracker * {
        auto *tracker = new dcv_tracker();
        if (kind == DCV_TRACKER_KCF) tracker->tracker = cv::TrackerKCF::create();
        else tracker->tracker = cv::TrackerCSRT::create();
        return tracker;
    });
}

void dcv_tracker_destroy(dcv_tracker *tracker) { delete tracker; }

int dcv_tracker_start(dcv_tracker *tracker, const dcv_image *image, float x, float y,
                      float width, float height, dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (tracker == nullptr || !usable(image, status)) return -1;
        tracker->tracker->init(image->mat, cv::Rect((int)x, (int)y, (int)width, (int)height));
        return 0;
    });
}

int dcv_tracker_update(dcv_tracker *tracker, const dcv_image *image, dcv_box *out,
                       dcv_status *status) {
    return guarded<int>(status, -1, [&]() -> int {
        if (tracker == nullptr || out == nullptr || !usable(image, status)) return -1;
        cv::Rect box;
        if (!tracker->tracker->update(image->mat, box)) return 0;
        *out = dcv_box{(float)box.x, (float)box.y, (float)box.width, (float)box.height, 1.0f};
        return 1;
    });
}
