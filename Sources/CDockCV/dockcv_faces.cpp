// dockcv_faces.cpp: O-Net's input, the MTCNN cascade, single-object trackers (the C interface: include/dockcv.h).

#include "dockcv_internal.hpp"

using namespace dockcv_shim;

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

// One network's two outputs after a run (box regression, face probability): from OpenCV's DNN
// or from the caller's engine (`runner`), read in place.
struct StageOutputs {
    const float *reg = nullptr, *prob = nullptr;
    int64_t reg_shape[4] = {1, 1, 1, 1}, prob_shape[4] = {1, 1, 1, 1};
    std::vector<cv::Mat> kept;  // OpenCV's outputs, alive while read
};

StageOutputs run_network(cv::dnn::Net &net, const dcv_network_runner *runner, cv::Mat &blob, const char *reg_name,
                         const char *prob_name) {
    StageOutputs result;
    if (runner == nullptr || runner->run == nullptr) {
        net.setInput(blob);
        net.forward(result.kept, std::vector<cv::String>{reg_name, prob_name});
        for (int k = 0; k < 2; ++k) {
            const cv::Mat &m = result.kept[k];
            int64_t *shape = k == 0 ? result.reg_shape : result.prob_shape;
            for (int d = 0; d < std::min(4, m.dims); ++d) shape[4 - std::min(4, m.dims) + d] = m.size[d];
        }
        result.reg = result.kept[0].ptr<float>();
        result.prob = result.kept[1].ptr<float>();
        return result;
    }
    int64_t shape[4];
    for (int d = 0; d < 4; ++d) shape[d] = blob.size[d];
    const float *outputs[2] = {nullptr, nullptr};
    int64_t shapes[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    dcv_status status{};
    if (runner->run(runner->context, blob.ptr<float>(), shape, 4, 2, outputs, shapes, &status) != 0 || !outputs[0] ||
        !outputs[1])
        throw std::runtime_error(status.message[0] ? status.message : "the inference engine failed");
    result.reg = outputs[0];
    result.prob = outputs[1];
    std::copy(shapes, shapes + 4, result.reg_shape);
    std::copy(shapes + 4, shapes + 8, result.prob_shape);
    return result;
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

// The pyramid's first scale for faces from `min_face` pixels up: 12 / min_face up to 20 px faces;
// above, the first of a fixed ladder (20 px faces, then each step 0.709 of the one before, as the
// pyramid's own steps) that looks for faces no smaller than asked, so from min_face to 1.41 times
// min_face up. A face size asked for that changes a little from look to look (the smallest face
// found, halved) then gives the same pictures, and the networks meet the same input sizes again:
// the inference engine prepares each new size once (about 2 ms a size for P-Net), not at each look.
float pyramid_start(float min_face) {
    if (min_face <= 20.f) return 12.f / min_face;
    const float steps = std::ceil(std::log(min_face / 20.f) / std::log(1 / 0.709f) - 1e-4f);
    return 12.f / 20.f * std::pow(0.709f, steps);
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
std::vector<FaceCandidate> stage(cv::dnn::Net &net, const dcv_network_runner *runner, const std::vector<PyramidLevel> &pyramid,
                                 const std::vector<FaceCandidate> &boxes, int size, const char *reg_name, const char *prob_name,
                                 float threshold) {
    std::vector<FaceCandidate> kept;
    if (boxes.empty()) return kept;
    const int n = (int)boxes.size();
    // The batch padded with empty crops to a power of two: a few batch sizes, each prepared once
    // by the engine, instead of one for each count of boxes.
    int padded = 1;
    while (padded < n) padded *= 2;
    int dims[4] = {padded, size, size, 3};
    cv::Mat batch(4, dims, CV_32F, cv::Scalar(0));
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
    const StageOutputs outs = run_network(net, runner, batch, reg_name, prob_name);
    // n x 4 and n x 2.
    for (int i = 0; i < n; ++i) {
        const float p = outs.prob[i * 2 + 1];
        if (p < threshold) continue;
        FaceCandidate b = boxes[i];
        b.score = p;
        for (int k = 0; k < 4; ++k) b.reg[k] = outs.reg[i * 4 + k];
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
    return dcv_mtcnn_detect_with(net, nullptr, image, min_face, thresholds, out, capacity, status);
}

int dcv_mtcnn_detect_with(dcv_mtcnn *net, const dcv_network_runner *runners, const dcv_image *image, float min_face,
                          const float *thresholds, dcv_box *out, int capacity, dcv_status *status) {
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
        for (float scale = pyramid_start(min_face); shortest * scale >= 12; scale *= 0.709f) {
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
            cv::Mat blob = mtcnn_input(scaled);
            const StageOutputs outs = run_network(net->pnet, runners ? &runners[0] : nullptr, blob, "conv2d_4", "softmax");
            // Outputs are 1 x W' x H' x C: indexed by the cell's x, then its y.
            const int cw = (int)outs.prob_shape[1], ch = (int)outs.prob_shape[2];
            const float *reg = outs.reg, *prob = outs.prob;
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
        auto refined = stage(net->rnet, runners ? &runners[1] : nullptr, pyramid, proposals, 24, "dense_2", "softmax_1", thresholds[1]);
        refined = suppress(refined, 0.7f, false);
        refine(refined, true);
        squared(refined);
        // Output: O-Net on 48x48 crops.
        auto faces = stage(net->onet, runners ? &runners[2] : nullptr, pyramid, refined, 48, "dense_5", "softmax_2", thresholds[2]);
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
