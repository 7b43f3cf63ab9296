// hog_scorer.cpp: see hog_scorer.hpp.
#include "hog_scorer.hpp"

#include <opencv2/core/hal/intrin.hpp>

#include <algorithm>
#include <cmath>

namespace dockcv {

namespace {
constexpr int kBlock = 16, kCell = 8, kBins = 9;
constexpr int kBlockValues = 4 * kBins;  // 2x2 cells of 9 bins
constexpr int kRowStride = 20;           // a row's sums: 2 cell columns of 9 bins, padded to whole 4-float vectors

float dot(const float *a, const float *b, int n) {
    int k = 0;
#if CV_SIMD128
    cv::v_float32x4 s0 = cv::v_setzero_f32(), s1 = cv::v_setzero_f32(), s2 = cv::v_setzero_f32(),
                    s3 = cv::v_setzero_f32();
    for (; k + 16 <= n; k += 16) {
        s0 = cv::v_muladd(cv::v_load(a + k), cv::v_load(b + k), s0);
        s1 = cv::v_muladd(cv::v_load(a + k + 4), cv::v_load(b + k + 4), s1);
        s2 = cv::v_muladd(cv::v_load(a + k + 8), cv::v_load(b + k + 8), s2);
        s3 = cv::v_muladd(cv::v_load(a + k + 12), cv::v_load(b + k + 12), s3);
    }
    for (; k + 4 <= n; k += 4) s0 = cv::v_muladd(cv::v_load(a + k), cv::v_load(b + k), s0);
    float s = cv::v_reduce_sum((s0 + s1) + (s2 + s3));
#else
    float s = 0;
#endif
    for (; k < n; ++k) s += a[k] * b[k];
    return s;
}

// sums[c] += w * rows[c] for `columns` block columns: `rows` at kRowStride, `sums` at twice that.
void addScaled(float *sums, const float *rows, float w, int columns) {
    for (int c = 0; c < columns; ++c, sums += 2 * kRowStride, rows += kRowStride) {
        int k = 0;
#if CV_SIMD128
        const cv::v_float32x4 scale = cv::v_setall_f32(w);
        for (; k < kRowStride; k += 4)
            cv::v_store(sums + k, cv::v_muladd(cv::v_load(rows + k), scale, cv::v_load(sums + k)));
#endif
        for (; k < kRowStride; ++k) sums[k] += w * rows[k];
    }
}

// HOGDescriptor's L2-Hys: scaled to unit length (plus 0.1 per value), cut at `clip`, scaled
// to unit length again.
void normalizeL2Hys(float *v, float clip) {
    float sum = 0;
    for (int k = 0; k < kBlockValues; ++k) sum += v[k] * v[k];
    float scale = 1.f / (std::sqrt(sum) + kBlockValues * 0.1f);
    sum = 0;
    for (int k = 0; k < kBlockValues; ++k) {
        v[k] = std::min(v[k] * scale, clip);
        sum += v[k] * v[k];
    }
    scale = 1.f / (std::sqrt(sum) + 1e-3f);
    for (int k = 0; k < kBlockValues; ++k) v[k] *= scale;
}
}  // namespace

bool HogScorer::handles(int stride) const {
    const cv::HOGDescriptor &d = *descriptor_;
    return !weights_.empty() && d.winSize == window_ && d.blockSize == cv::Size(kBlock, kBlock) && d.cellSize == cv::Size(kCell, kCell) &&
           d.blockStride == cv::Size(kCell, kCell) && d.nbins == kBins && !d.signedGradient &&
           d.histogramNormType == cv::HOGDescriptor::L2Hys && d.winSize.width % kCell == 0 &&
           d.winSize.height % kCell == 0 && d.winSize.width >= kBlock && d.winSize.height >= kBlock && stride > 0 && stride % kCell == 0;
}

HogScorer::HogScorer(const cv::HOGDescriptor &d)
    : descriptor_(&d), window_(d.winSize), blockColumns_((d.winSize.width - kBlock) / kCell + 1),
      blockRows_((d.winSize.height - kBlock) / kCell + 1) {
    // No SVM yet (or a short one): no weights, and handles() says no.
    const size_t size = d.getDescriptorSize();
    if (d.svmDetector.size() >= size) weights_.assign(d.svmDetector.begin(), d.svmDetector.begin() + size);
    bias_ = d.svmDetector.size() > size ? d.svmDetector[size] : 0.f;
    // A pixel at i in the block (0...15) weighs exp(-(i - 8)^2 / (2 sigma^2)) along each axis;
    // its cell coordinate (i + 0.5) / 8 - 0.5 splits it between the two cells around it.
    const double sigma = d.getWinSigma();
    const float spread = (float)(1 / (2 * sigma * sigma));
    for (int i = 0; i < kBlock; ++i) {
        const float fromMiddle = i - kBlock * 0.5f, gauss = std::exp(-fromMiddle * fromMiddle * spread);
        const float at = (i + 0.5f) / kCell - 0.5f;
        const int first = (int)std::floor(at);
        const float toSecond = at - first;
        axisWeight_[0][i] = gauss * (first == -1 ? toSecond : first == 0 ? 1 - toSecond : 0);
        axisWeight_[1][i] = gauss * (first == 0 ? toSecond : first == 1 ? 1 - toSecond : 0);
    }
}

// The normalized histograms of every block of the gradient, `columns` x `rows` of them at the
// block stride, block column by block column (so a window's column of blocks is contiguous),
// each in HOGDescriptor's order: cell columns, then cell rows, then bins.
void HogScorer::blockFeatures(const cv::Mat &grad, const cv::Mat &qangle, int columns, int rows,
                              std::vector<float> &features) const {
    features.resize((size_t)columns * rows * kBlockValues);
    // One row's sums for each block column (two cell columns of 9 bins), and the two block
    // rows being summed (by parity; cell row, then the row's sums), so a row adds whole vectors.
    std::vector<float> rowSums((size_t)columns * kRowStride);
    std::vector<float> pending((size_t)2 * columns * 2 * kRowStride);
    const int lastRow = (rows - 1) * kCell + kBlock;
    const float clip = (float)descriptor_->L2HysThreshold;
    for (int y = 0; y < lastRow; ++y) {
        const float *g = grad.ptr<float>(y);
        const uchar *q = qangle.ptr<uchar>(y);
        std::fill(rowSums.begin(), rowSums.end(), 0.f);
        // Each 8 px cell column is the left half of block column c and the right half of c - 1.
        // The left quarter of a block weighs only on its left cell column, the right quarter
        // only on its right one.
        for (int c = 0; c <= columns; ++c) {
            float *left = c < columns ? &rowSums[(size_t)c * kRowStride] : nullptr;
            float *right = c > 0 ? &rowSums[(size_t)(c - 1) * kRowStride] : nullptr;
            const float *gc = g + 2 * c * kCell;
            const uchar *qc = q + 2 * c * kCell;
            for (int i = 0; i < kCell; ++i) {
                const float v0 = gc[2 * i], v1 = gc[2 * i + 1];
                const int b0 = qc[2 * i], b1 = qc[2 * i + 1];
                if (left) {
                    const float w0 = axisWeight_[0][i], w1 = axisWeight_[1][i];
                    left[b0] += v0 * w0; left[b1] += v1 * w0;
                    if (i >= kCell / 2) { left[kBins + b0] += v0 * w1; left[kBins + b1] += v1 * w1; }
                }
                if (right) {
                    const float w0 = axisWeight_[0][kCell + i], w1 = axisWeight_[1][kCell + i];
                    if (i < kCell / 2) { right[b0] += v0 * w0; right[b1] += v1 * w0; }
                    right[kBins + b0] += v0 * w1; right[kBins + b1] += v1 * w1;
                }
            }
        }
        // This row is row y - 8 by of block rows by = y / 8 and y / 8 - 1.
        for (int by = y / kCell - 1; by <= y / kCell; ++by) {
            if (by < 0 || by >= rows) continue;
            const int r = y - by * kCell;
            float *acc = &pending[(size_t)(by & 1) * columns * 2 * kRowStride];
            if (r == 0) std::fill(acc, acc + (size_t)columns * 2 * kRowStride, 0.f);
            for (int cellRow = 0; cellRow < 2; ++cellRow) {
                const float w = axisWeight_[cellRow][r];
                if (w == 0) continue;
                addScaled(acc + cellRow * kRowStride, rowSums.data(), w, columns);
            }
            if (r != kBlock - 1) continue;
            for (int bx = 0; bx < columns; ++bx) {
                const float *a = acc + (size_t)bx * 2 * kRowStride;
                float *f = &features[((size_t)bx * rows + by) * kBlockValues];
                for (int cellColumn = 0; cellColumn < 2; ++cellColumn)
                    for (int cellRow = 0; cellRow < 2; ++cellRow)
                        std::copy(a + cellRow * kRowStride + cellColumn * kBins,
                                  a + cellRow * kRowStride + (cellColumn + 1) * kBins,
                                  f + (cellColumn * 2 + cellRow) * kBins);
                normalizeL2Hys(f, clip);
            }
        }
    }
}

void HogScorer::detect(const cv::Mat &image, double threshold, int stride, std::vector<cv::Point> &hits,
                       std::vector<double> &scores) const {
    hits.clear();
    scores.clear();
    const cv::Size padding(kCell, kCell);
    cv::Mat grad, qangle;
    descriptor_->computeGradient(image, grad, qangle, padding, padding);
    if (grad.cols < window_.width || grad.rows < window_.height) return;
    const int columns = (grad.cols - kBlock) / kCell + 1, rows = (grad.rows - kBlock) / kCell + 1;
    std::vector<float> features;
    blockFeatures(grad, qangle, columns, rows, features);
    const int span = blockRows_ * kBlockValues, step = stride / kCell;
    const int across = (grad.cols - window_.width) / stride + 1, down = (grad.rows - window_.height) / stride + 1;
    for (int wy = 0; wy < down; ++wy)
        for (int wx = 0; wx < across; ++wx) {
            double s = bias_;
            for (int j = 0; j < blockColumns_; ++j)
                s += dot(&features[((size_t)(wx * step + j) * rows + wy * step) * kBlockValues],
                         &weights_[(size_t)j * span], span);
            if (s >= threshold) {
                hits.emplace_back(wx * stride - padding.width, wy * stride - padding.height);
                scores.push_back(s);
            }
        }
}

}  // namespace dockcv
