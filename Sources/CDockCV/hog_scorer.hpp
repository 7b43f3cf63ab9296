// hog_scorer.hpp: DockTrack's HOG window scorer, used by the shim's people detector.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/objdetect.hpp>
#include <vector>

namespace dockcv {

/// Scores HOG windows as cv::HOGDescriptor::detect does, faster.
///
/// The gradient is HOGDescriptor::computeGradient's own. The block histograms are the same
/// sums as HOGDescriptor's (each pixel's two orientation bins, weighted by a Gaussian over the
/// 16x16 block, sigma 4, and bilinearly between its 2x2 cells of 8x8, then L2-Hys), computed
/// in separable passes: along each row for each block column, then down the block's 16 rows
/// (the Gaussian and the bilinear weights are both products of a factor along x and one along
/// y). Each row's sums serve the two blocks that overlap there. The margins differ from
/// HOGDescriptor's by float rounding only (at most 1.2e-6 over all 8580 windows of a vtest.avi
/// frame at 1067x600), since the sums are taken in another order. On that picture, one
/// level's windows cost 4.9 ms against HOGDescriptor::detect's 11.7, one thread: the gradient
/// 1.3 (the same call in both), the histograms 2.4, the SVM 1.2 (the row-wise accumulation is
/// scattered adds into the bins; the sums down the block are whole vectors).
///
/// Only the layout both of DockTrack's people windows use: 16x16 blocks of 8x8 cells at an
/// 8 px block stride, 9 unsigned bins, L2-Hys; window strides a multiple of 8.
class HogScorer {
public:
    explicit HogScorer(const cv::HOGDescriptor &descriptor);

    /// Whether the descriptor has the layout this scorer computes (and had its SVM when the
    /// scorer was made), at window stride `stride`.
    bool handles(int stride) const;

    /// As descriptor.detect(image, hits, scores, threshold, Size(stride, stride), Size(8, 8)):
    /// the top-left corners (image pixels, from -8) of the windows scoring `threshold` or more,
    /// in the same order, and their scores. `image` may be a region of a larger picture: the
    /// gradient at its edge comes from the pixels around it, as HOGDescriptor's does.
    void detect(const cv::Mat &image, double threshold, int stride, std::vector<cv::Point> &hits,
                std::vector<double> &scores) const;

private:
    const cv::HOGDescriptor *descriptor_;  // the owner's; it outlives the scorer
    cv::Size window_;
    int blockColumns_, blockRows_;     // blocks across and down one window
    std::vector<float> weights_;       // the SVM, block column by block column (OpenCV's order),
                                       // as the descriptor had it when the scorer was made
    float bias_;
    // The weight of a block's pixel row (or column) i for its cell row (column) c: the
    // Gaussian's factor along that axis times the bilinear one (the block is square).
    float axisWeight_[2][16];

    void blockFeatures(const cv::Mat &grad, const cv::Mat &qangle, int columns, int rows,
                       std::vector<float> &features) const;
};

}  // namespace dockcv
