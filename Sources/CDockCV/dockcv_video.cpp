// dockcv_video.cpp: video in (files and streams), the preview window, video out (the C interface: include/dockcv.h).

#include "dockcv_internal.hpp"

using namespace dockcv_shim;

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
