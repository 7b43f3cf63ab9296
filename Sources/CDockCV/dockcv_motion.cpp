// dockcv_motion.cpp: motion between pictures: phase correlation, the best whole-pixel offset, a feature homography, template matching (the C interface: include/dockcv.h).

#include "dockcv_internal.hpp"

using namespace dockcv_shim;

// ---- motion between pictures ---------------------------------------------------------------

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
