// dockcv_detectors.cpp: the SSD face network, the person check, cascades, the HOG people detector (the C interface: include/dockcv.h).

#include "dockcv_internal.hpp"

using namespace dockcv_shim;

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
