// dockcv_internal.hpp: what the shim's C++ files share (not part of the C interface): the
// opaque types' definitions, the status and exception handling every function goes through,
// and the helpers more than one file uses. See include/dockcv.h for the interface.
#pragma once

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

namespace dockcv_shim {

void set_status(dcv_status *status, int code, const std::string &message);
void clear_status(dcv_status *status);
// Silences OpenCV's and FFmpeg's own warnings (DockTrack reports errors itself), once.
void quiet_libraries();
// What an encoded picture declares of itself, read before it is decoded: its pixel count (0
// when unknown), whether it is a JPEG, whether its format and size are ones the shim decodes.
double declared_pixels(const uchar *bytes, size_t count);
bool is_jpeg(const uchar *bytes, size_t count);
bool picture_format_allowed(const uchar *bytes, size_t count);
bool picture_size_allowed(const uchar *bytes, size_t count);
int copy_boxes(const std::vector<cv::Rect> &rects, const std::vector<double> &scores, dcv_box *out, int capacity);
// Whether `image` holds pixels (the status says it does not).
bool usable(const dcv_image *image, dcv_status *status);
// The region (x, y, w, h) of `src`: a view when inside it, else a copy padded with 0
// (dockcv_image.cpp).
cv::Mat padded_region(const cv::Mat &src, int x, int y, int w, int h);
// The region `want` of `src` shrunk to `size` (dockcv_image.cpp).
void shrunk_region(const cv::Mat &src, cv::Rect want, cv::Size size, bool whole_steps, cv::Mat &dst);

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

}  // namespace dockcv_shim
