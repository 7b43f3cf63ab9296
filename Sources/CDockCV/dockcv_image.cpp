// dockcv_image.cpp: images: making, reading, writing, resizing, drawing, crops, patches and network inputs (the C interface: include/dockcv.h).

#include "dockcv_internal.hpp"

using namespace dockcv_shim;

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
cv::Mat dockcv_shim::padded_region(const cv::Mat &src, int x, int y, int w, int h) {
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
void dockcv_shim::shrunk_region(const cv::Mat &src, cv::Rect want, cv::Size size, bool whole_steps, cv::Mat &dst) {
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
