/*
 * dockcv.h: the C face of DockTrack's OpenCV shim.
 *
 * Why this exists: OpenCV 4.6 is a C++ library and Swift imports C, not C++ templates and
 * exceptions. This header is the whole surface DockTrack uses. The rules:
 *
 *   - Every OpenCV object is an opaque handle with a create/open and a destroy function.
 *     The Swift side owns each handle in one class and destroys it in deinit.
 *   - No C++ exception crosses this boundary. Functions that can fail take a dcv_status*,
 *     fill it (code + one-line message) and return NULL or a negative number.
 *   - Boxes are in pixels of the image passed in, origin at the top-left (OpenCV's
 *     convention). Conversion to DockTrack's unit coordinates happens in Swift, in one place.
 *   - Images are 8-bit BGR (3 channels) or gray (1 channel), like cv::Mat CV_8UC3/CV_8UC1.
 *     Functions that produce an image write into a caller-provided destination handle, so a
 *     loop can reuse buffers.
 */
#ifndef DOCKCV_H
#define DOCKCV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------------------------ */

typedef enum dcv_code {
    DCV_OK = 0,
    DCV_ERR_OPEN = 1,     /* a file could not be opened or is not what it should be */
    DCV_ERR_READ = 2,     /* reading or decoding failed midway */
    DCV_ERR_ARGUMENT = 3, /* a bad argument (empty image, bad size, ...) */
    DCV_ERR_OPENCV = 4,   /* OpenCV threw cv::Exception; message holds its text */
    DCV_ERR_INTERNAL = 5, /* any other C++ exception (std::bad_alloc, ...) */
    DCV_ERR_WRITE = 6     /* writing a file failed */
} dcv_code;

/* The most pixels a picture may have to be decoded (50 megapixels; 8K UHD is 33): a file, a
 * stream's frame or a camera's JPEG whose header claims more is refused before anything is
 * allocated for it. */
#define DCV_MAX_PICTURE_PIXELS 52428800

typedef struct dcv_status {
    int code;           /* a dcv_code */
    char message[512];  /* one line, NUL-terminated; empty when code == DCV_OK */
} dcv_status;

/* A detection box: pixels, top-left origin. `score` is the detector's native score
 * (SSD confidence, cascade neighbour count, HOG SVM margin). */
typedef struct dcv_box {
    float x, y, width, height;
    float score;
} dcv_box;

/* ---- library ----------------------------------------------------------------------------- */

/* OpenCV's version string, e.g. "4.6.0". */
const char *dcv_version(void);
/* cv::setNumThreads / cv::getNumThreads. */
void dcv_set_num_threads(int threads);
int dcv_get_num_threads(void);
/* Keeps big freed blocks in the process for the next frame (glibc mallopt: blocks of up to 32 MB
 * from the heap instead of mmap, up to 256 MB free at the heap's top kept). OpenCV's networks and
 * pyramids allocate megabytes per frame; returned to the kernel at once, each comes back as page
 * faults on zeroed pages. Call once, before the first frame. */
void dcv_keep_freed_blocks(void);

/* ---- images (cv::Mat) -------------------------------------------------------------------- */

typedef struct dcv_image dcv_image;

/* An empty image, to be filled by a function that writes into a destination. */
dcv_image *dcv_image_create(void);
void dcv_image_destroy(dcv_image *image);
/* A deep copy of pixels (BGR when channels == 3, gray when 1); `stride` is bytes per row. */
dcv_image *dcv_image_from_pixels(const uint8_t *pixels, int width, int height, int channels,
                                 size_t stride, dcv_status *status);
/* A new, uninitialised width x height image (3 channels: BGR, 1: gray), continuous rows, for a
 * producer to write into through dcv_image_mutable_pixels (no copy of a frame on the way in). */
dcv_image *dcv_image_allocate(int width, int height, int channels, dcv_status *status);
/* A deep copy of `image`. */
dcv_image *dcv_image_clone(const dcv_image *image, dcv_status *status);
/* The picture file at `path` as BGR: read whole, its format (JPEG, PNG, BMP, TIFF, WebP, PNM) and
 * declared size (at most DCV_MAX_PICTURE_PIXELS) checked, then decoded (cv::imdecode). NULL with
 * DCV_ERR_OPEN and the reason when it is not a readable picture. */
dcv_image *dcv_image_read(const char *path, dcv_status *status);
/* cv::imwrite; the extension picks the format. */
int dcv_image_write(const dcv_image *image, const char *path, dcv_status *status);
/* The image as JPEG at `quality` (1...100) into `out` (`capacity` bytes): the encoded size, or -1
 * with the status (DCV_ERR_WRITE when it does not fit: the size needed is in `needed`). */
long dcv_image_encode_jpeg(const dcv_image *image, int quality, uint8_t *out, size_t capacity, size_t *needed,
                           dcv_status *status);

int dcv_image_width(const dcv_image *image);
int dcv_image_height(const dcv_image *image);
int dcv_image_channels(const dcv_image *image);
/* Row stride in bytes and the first byte; NULL when empty. Valid until the image changes. */
size_t dcv_image_stride(const dcv_image *image);
const uint8_t *dcv_image_pixels(const dcv_image *image);
/* The first byte, writable; only for the producer of a new image (dcv_image_allocate). */
uint8_t *dcv_image_mutable_pixels(dcv_image *image);

/* cv::resize into dst: with DCV_RESIZE_SMOOTH, INTER_AREA (shrinking) or INTER_LINEAR (growing);
   with DCV_RESIZE_BILINEAR_EXACT, INTER_LINEAR_EXACT either way (as HOGDescriptor makes its
   pyramid levels); with DCV_RESIZE_BILINEAR, INTER_LINEAR either way (a quick look: 1280x720 to
   320x180 in a third of INTER_LINEAR_EXACT's time). */
enum { DCV_RESIZE_SMOOTH = 0, DCV_RESIZE_BILINEAR_EXACT = 1, DCV_RESIZE_BILINEAR = 2 };
int dcv_image_resize(const dcv_image *src, dcv_image *dst, int width, int height, int interpolation,
                     dcv_status *status);
/* BGR -> gray (a gray source is copied), then cv::equalizeHist when equalize != 0. */
int dcv_image_gray(const dcv_image *src, dcv_image *dst, int equalize, dcv_status *status);
/* cv::flip around the vertical axis (mirror left-right). */
int dcv_image_mirror(const dcv_image *src, dcv_image *dst, dcv_status *status);
/* The picture's motion frame to frame (CameraShiftEstimator). dcv_image_small_float_gray: a
   width x height copy of src for it (cv::resize with INTER_LINEAR, then gray, then CV_32F);
   dcv_hann_window: cv::createHanningWindow of that size, made once; dcv_phase_shift:
   cv::phaseCorrelate(earlier, later, window), the translation (*dx, *dy, pixels, x right, y down)
   that moves `earlier` onto `later` and the peak's strength in *response (0...1; low when no one
   shift explains the change). dcv_phase_shift returns -1 for images that are not one float
   channel of the window's size. */
int dcv_image_small_float_gray(const dcv_image *src, dcv_image *dst, int width, int height, dcv_status *status);
int dcv_hann_window(dcv_image *dst, int width, int height, dcv_status *status);
int dcv_phase_shift(const dcv_image *earlier, const dcv_image *later, const dcv_image *window, double *dx, double *dy,
                    double *response, dcv_status *status);
/* The whole-pixel offset, one axis at a time (*dx, *dy each -1, 0 or 1), that best lines `later`
   up with `earlier` (the least sum of absolute differences over the picture but its border row
   and column): 0, 0 when no shift of about half a pixel or more explains the change better than
   none, and the phase correlation can be passed over. Both one float channel of one size, at
   least 3x3; -1 otherwise. */
int dcv_best_unit_offset(const dcv_image *earlier, const dcv_image *later, int *dx, int *dy, dcv_status *status);

/* Where one picture lies in another, from their features: ORB features of both (gray; one per
   90 pixels, 1000 to 10000, FAST threshold 10, 15-pixel patches), each feature of `from`
   matched to its two nearest in `to` (Hamming distance) and kept when the nearest is clearly
   nearer (Lowe's ratio 0.8), then cv::findHomography with RANSAC (3 px). On
   success `homography` holds the 3x3 matrix, row by row, that takes a pixel of `from` to `to`
   (x right, y down), *inliers the matches that agree with it and *matches those kept before
   RANSAC; returns 0. Returns 1 (the matrix untouched) when fewer than 8 matches were kept or no
   homography fits them, -1 on an error. */
int dcv_feature_homography(const dcv_image *from, const dcv_image *to, double homography[9], int *inliers,
                           int *matches, dcv_status *status);

/* Drawing, in place, for annotated output. Colours are B, G, R in 0...255. */
void dcv_image_draw_rect(dcv_image *image, int x, int y, int width, int height,
                         int b, int g, int r, int thickness);
void dcv_image_fill_rect(dcv_image *image, int x, int y, int width, int height,
                         int b, int g, int r);
/* A straight line from (x0, y0) to (x1, y1), anti-aliased. */
void dcv_image_draw_line(dcv_image *image, int x0, int y0, int x1, int y1, int b, int g, int r,
                         int thickness);
/* A new width x height BGR image filled with one colour (a blank canvas for plots). */
dcv_image *dcv_image_filled(int width, int height, int b, int g, int r, dcv_status *status);
/* Text with its baseline's left end at (x, y), Hershey simplex font. */
void dcv_image_draw_text(dcv_image *image, const char *text, int x, int y, double scale,
                         int b, int g, int r, int thickness);

/* The region (x, y, width, height in pixels, top-left origin) of src, resized to
 * out_width x out_height, into dst; parts outside src are black. A virtual camera's view. */
int dcv_image_crop(const dcv_image *src, dcv_image *dst, float x, float y, float width,
                   float height, int out_width, int out_height, dcv_status *status);

/* src resized into the region (x, y, width, height in pixels, top-left origin) of dst, in
 * place: a picture in the picture. The part of the region outside dst is left out; both must
 * have the same channels. Returns 0, or -1 on error. */
int dcv_image_paste(dcv_image *dst, const dcv_image *src, int x, int y, int width, int height, dcv_status *status);

/* The pixels of the region (x, y, width, height in pixels, top-left origin) resized to
 * out_width x out_height (area interpolation), written row by row into `out` as floats
 * 0...255: one gray value per pixel when gray != 0, else B, G, R per pixel (3 floats).
 * Parts of the region outside the image read as 0. Returns 0, or -1 on error. */
int dcv_image_patch(const dcv_image *image, float x, float y, float width, float height,
                    int out_width, int out_height, int gray, float *out, dcv_status *status);

/* A network's input, planar (all B, then all G, then all R; NCHW with N = 1) floats 0...255:
 * the region (x, y, width, height in pixels, top-left origin) resized to content_width x
 * content_height (linear interpolation) at the top-left of an out_width x out_height plane,
 * the rest of the plane `pad`. Parts of the region outside the image read as 0. The content
 * must fit the plane. `out` holds 3 * out_width * out_height floats. Returns 0, or -1. */
int dcv_image_planar_input(const dcv_image *image, float x, float y, float width, float height,
                           int content_width, int content_height, int out_width, int out_height,
                           float pad, float *out, dcv_status *status);
/* The same input folded 2x2 into 12 channels at half the size (YOLOX's Focus layer, done here
 * instead of by the network: tools/fold-yolox-focus.py): plane k*3+c (out_width/2 x
 * out_height/2) holds colour c (B, G, R) of the plane's pixels at rows 2y+dy, columns 2x+dx,
 * with (dy, dx) = (0,0), (1,0), (0,1), (1,1) for k = 0..3. out_width and out_height must be
 * even; `out` holds 3 * out_width * out_height floats. Returns 0, or -1. */
int dcv_image_folded_input(const dcv_image *image, float x, float y, float width, float height,
                           int content_width, int content_height, int out_width, int out_height,
                           float pad, float *out, dcv_status *status);

/* Where `templ` (tw x th floats, row by row) matches best inside `search` (sw x sh floats),
 * both one gray value per pixel as dcv_image_patch writes them: cv::matchTemplate with
 * TM_CCOEFF_NORMED. Writes the best match's top-left corner (pixels of `search`) and its
 * normalized correlation (-1...1; 0 where either is flat). The template must fit inside the
 * search area. Returns 0, or -1 on error. */
int dcv_match_template(const float *search, int sw, int sh, const float *templ, int tw, int th,
                       int *best_x, int *best_y, float *score, dcv_status *status);

/* ---- video input (cv::VideoCapture, FFmpeg back end) ------------------------------------- */

typedef struct dcv_capture dcv_capture;

typedef struct dcv_capture_info {
    int width, height;
    double fps;          /* 0 when the container does not say */
    long frame_count;    /* the container's claim; may be wrong or 0 */
} dcv_capture_info;

/* Opens a video file. NULL with DCV_ERR_OPEN when FFmpeg cannot open or decode it. */
dcv_capture *dcv_capture_open(const char *path, dcv_status *status);
/* Opens a network stream (any URL FFmpeg reads: rtsp://, http:// MJPEG, ...), giving up when it
 * does not answer within `open_timeout_ms`; a later read that waits longer than
 * `read_timeout_ms` for a frame fails (CAP_PROP_OPEN_TIMEOUT_MSEC, CAP_PROP_READ_TIMEOUT_MSEC).
 * NULL with DCV_ERR_OPEN when nothing FFmpeg can decode answered. A Motion JPEG stream is read
 * as its JPEG pictures, each decoded on its own (cv::imdecode), so that a stream whose picture
 * size changes midway is read at each picture's size (OpenCV 4.6's FFmpeg reader keeps the
 * first size and garbles the rest). */
dcv_capture *dcv_capture_open_stream(const char *url, int open_timeout_ms, int read_timeout_ms, dcv_status *status);
void dcv_capture_destroy(dcv_capture *capture);
dcv_capture_info dcv_capture_get_info(const dcv_capture *capture);
/* Decodes the next frame into `into` (BGR). Returns 1 with a frame, 0 at the end of the
 * stream, -1 on error. `position_ms` receives the frame's presentation time when not NULL. */
int dcv_capture_read(dcv_capture *capture, dcv_image *into, double *position_ms,
                     dcv_status *status);
/* Decodes one picture of a Motion JPEG stream (the bytes of one part) into `into` (BGR): 1 when
 * it decoded, 0 when it is passed over (not a JPEG, cut short, or its header claims more than
 * DCV_MAX_PICTURE_PIXELS: refused before anything is allocated for it). Never throws; `bytes` are
 * only read. dcv_capture_read reads a stream's pictures with it; the fuzz target feeds it parts. */
int dcv_image_decode_stream_picture(const uint8_t *bytes, size_t count, dcv_image *into);
/* Decodes the next frame without converting it (cheap skipping). Same returns as read. */
int dcv_capture_skip(dcv_capture *capture, dcv_status *status);

/* ---- preview window (cv::imshow, highgui) ------------------------------------------------ */

/* Shows `image` in a window named `title` and waits up to wait_ms for a key. Returns the key
 * pressed (-1 for none), or -2 with status set when no window can be shown. The caller checks
 * that a display exists first: the GTK back end may end the process when it cannot open one. */
int dcv_window_show(const char *title, const dcv_image *image, int wait_ms, dcv_status *status);
void dcv_window_close(const char *title);

/* ---- video output (cv::VideoWriter) ------------------------------------------------------ */

typedef struct dcv_writer dcv_writer;

/* fourcc: four characters such as "mp4v" or "MJPG". */
dcv_writer *dcv_writer_open(const char *path, const char *fourcc, double fps, int width,
                            int height, dcv_status *status);
int dcv_writer_write(dcv_writer *writer, const dcv_image *image, dcv_status *status);
void dcv_writer_destroy(dcv_writer *writer);

/* ---- SSD face detector (cv::dnn::Net, res10 300x300 Caffe model) ------------------------- */

typedef struct dcv_ssd dcv_ssd;

dcv_ssd *dcv_ssd_open_caffe(const char *prototxt_path, const char *model_path,
                            dcv_status *status);
void dcv_ssd_destroy(dcv_ssd *net);
/* Runs the net on `image` resized to input_width x input_height with the given BGR mean.
 * Writes at most `capacity` boxes with score >= min_score into `out`, in pixels of `image`,
 * and returns how many it wrote (or -1 on error). Boxes are not clipped: a box may reach
 * past the image's border. */
int dcv_ssd_detect(dcv_ssd *net, const dcv_image *image, int input_width, int input_height,
                   double mean_b, double mean_g, double mean_r, float min_score,
                   dcv_box *out, int capacity, dcv_status *status);

/* ---- person check (cv::dnn::Net, SSDLite-MobileNetV2 trained for people, TensorFlow) ------ */

typedef struct dcv_person_net dcv_person_net;

/* The frozen graph (.pb) and the text graph OpenCV needs beside it (.pbtxt, written once by
 * tools/ssd_text_graph.py). */
dcv_person_net *dcv_person_net_open(const char *graph_path, const char *text_graph_path,
                                    dcv_status *status);
void dcv_person_net_destroy(dcv_person_net *net);
/* The people in the whole of `image`, squashed to input_size x input_size: at most `capacity`
 * boxes with score >= min_score, in pixels of `image`, not clipped. Returns how many, or -1. */
int dcv_person_net_detect(dcv_person_net *net, const dcv_image *image, int input_size,
                          float min_score, dcv_box *out, int capacity, dcv_status *status);
/* Asks the network whether a person stands in each of `count` candidate boxes (4 floats each:
 * x, y, width, height in pixels of `image`, top-left origin). Each candidate's crop is the square
 * `context` times its longer side around its centre, clipped to the image; the crops are resized
 * (squashed where clipped) to input_size x input_size and run one by one, RGB scaled to -1...1.
 * Writes to scores[i] the highest person score among the network's boxes in crop i that overlap
 * candidate i by at least `min_overlap` (intersection over union), 0 when none does.
 * Returns 0, or -1 on error. */
int dcv_person_net_score(dcv_person_net *net, const dcv_image *image, const float *boxes,
                         int count, int input_size, float context, float min_overlap,
                         float *scores, dcv_status *status);

/* ---- cascade classifier (Haar / LBP) ----------------------------------------------------- */

typedef struct dcv_cascade dcv_cascade;

dcv_cascade *dcv_cascade_open(const char *path, dcv_status *status);
void dcv_cascade_destroy(dcv_cascade *cascade);
/* cv::CascadeClassifier::detectMultiScale2 on a gray image. score = neighbour count.
 * Returns the number of boxes written, or -1 on error. */
int dcv_cascade_detect(dcv_cascade *cascade, const dcv_image *gray, double scale_factor,
                       int min_neighbors, int min_width, int min_height, int max_width,
                       int max_height, dcv_box *out, int capacity, dcv_status *status);

/* ---- HOG people detector ----------------------------------------------------------------- */

typedef struct dcv_hog dcv_hog;

/* cv::HOGDescriptor (64x128 window) with getDefaultPeopleDetector(). */
dcv_hog *dcv_hog_create_people(dcv_status *status);
/* The Daimler people detector: a 48x96 window (smaller people at a given scale, cheaper). */
dcv_hog *dcv_hog_create_daimler(dcv_status *status);
void dcv_hog_destroy(dcv_hog *hog);
/* The windows are scored by DockTrack's HOG scorer (hog_scorer.hpp: HOGDescriptor's own
 * gradient, the same block histograms summed in separable passes; margins equal to OpenCV's
 * but for float rounding, at well under half the cost), or by HOGDescriptor itself when `on` is
 * nonzero here, or for a window stride that is not a multiple of 8. */
void dcv_hog_set_opencv_scoring(dcv_hog *hog, int on);
/* detectMultiScale's search with the given stride (pixels), pyramid scale and hit threshold
 * (detectMultiScale itself when scoring with OpenCV); score = SVM margin. Boxes are grouped
 * (OpenCV's mean-shift-free grouping, threshold 2). `max_levels` > 0 searches only the first
 * that many levels of the pyramid (the smallest people); 0: every level a window fits in.
 * Returns the number of boxes written, or -1 on error (DCV_ERR_ARGUMENT for an image smaller
 * than the window, on which OpenCV 4.6 corrupts memory). */
int dcv_hog_detect(dcv_hog *hog, const dcv_image *image, double hit_threshold, int win_stride,
                   double scale, int max_levels, dcv_box *out, int capacity, dcv_status *status);
/* As dcv_hog_detect, looking only at windows near `region_count` regions of the image (4 ints
 * each: x, y, width, height in its pixels, top-left origin): the same pyramid levels, window grid
 * and grouping as detectMultiScale, each level searched only inside the regions (scaled to it,
 * grown to the window stride), so a window searched scores as in the whole search. Gradients
 * at a region's edge come from the pixels around it. No regions: no boxes. */
int dcv_hog_detect_regions(dcv_hog *hog, const dcv_image *image, const int *regions,
                           int region_count, double hit_threshold, int win_stride, double scale,
                           int max_levels, dcv_box *out, int capacity, dcv_status *status);

/* The main search of dcv_hog_detect_regions over `image` and, in the same call, smaller people
 * over `enlarged` (the same picture enlarged by scale^enlarged_levels, so that the main search's
 * first level is the level after its last): `enlarged`'s first `enlarged_levels` levels are
 * grouped together with the main search's first level, and apart from the main search's boxes.
 * A window of the main search's first level is scored once for both. Regions as in
 * dcv_hog_detect_regions, each picture's in its own pixels (both nullptr: all of both).
 * The main search's boxes go to `out` (their count to *count); returns the number of smaller
 * people's boxes written to `small_out` (in `enlarged`'s pixels), or -1 on error. */
int dcv_hog_detect_with_smaller(dcv_hog *hog, const dcv_image *image, const dcv_image *enlarged, int enlarged_levels,
                                const int *regions, int region_count, const int *enlarged_regions,
                                int enlarged_region_count, double hit_threshold, int win_stride, double scale,
                                dcv_box *out, int capacity, int *count, dcv_box *small_out, int small_capacity,
                                dcv_status *status);

/* ---- face landmarks (MTCNN output network, run by the inference engine) ------------------- */

/* The input of MTCNN's O-Net for the square around the face box (x, y, width, height; pixels,
 * top-left origin): the model was converted from Keras and takes RGB scaled to -1...1, laid out
 * 1 x W x H x C (width and height swapped), 48 x 48; written to out[48 * 48 * 3]. The square
 * (pixels: left, top, side) is written to square[3]: the network's landmarks and box regression
 * are fractions of it. Returns 0, or -1 on error. */
int dcv_onet_input(const dcv_image *image, float x, float y, float width, float height, float *out,
                   float *square, dcv_status *status);

/* ---- faces with the whole MTCNN cascade (ONNX) ------------------------------------------- */

/* A network the caller runs on its own inference engine, for a stage of a cascade the shim
 * drives (the shim builds each input and reads the outputs; it never sees the engine). `run`
 * takes `input` (float32, `rank` dimensions in `shape`), runs the network, and points
 * outputs[i] at output i's data and writes its shape into output_shapes[4 * i ...] (4
 * dimensions, fewer filled with 1 in front), for i < output_count; the data stays valid until
 * the next call. Returns 0, or -1 with `status` filled. */
typedef struct dcv_network_runner {
    void *context;
    int (*run)(void *context, float *input, const int64_t *shape, int rank, int output_count,
               const float **outputs, int64_t *output_shapes, dcv_status *status);
} dcv_network_runner;

typedef struct dcv_mtcnn dcv_mtcnn;

/* Loads MTCNN's proposal, refine and output networks (P-Net, R-Net, O-Net, converted from Keras:
 * RGB scaled to -1...1, laid out N x W x H x C). */
dcv_mtcnn *dcv_mtcnn_open(const char *pnet_path, const char *rnet_path, const char *onet_path,
                          dcv_status *status);
void dcv_mtcnn_destroy(dcv_mtcnn *net);
/* The MTCNN cascade (Zhang et al. 2016): P-Net over an image pyramid from faces of min_face
 * pixels up (scale factor 0.709; above 20 px, the pyramid starts on a fixed ladder of scales, so
 * faces from min_face to 1.41 times min_face up), non-maximum suppression, R-Net on 24x24 crops, O-Net on 48x48
 * crops, each stage keeping boxes whose face probability reaches its threshold (thresholds[3],
 * e.g. 0.6, 0.7, 0.7) and refining them by its box regression. Writes up to capacity boxes
 * (pixels, top-left origin, O-Net's probability as score). Returns the count, or -1. */
int dcv_mtcnn_detect(dcv_mtcnn *net, const dcv_image *image, float min_face,
                     const float *thresholds, dcv_box *out, int capacity, dcv_status *status);
/* The same cascade with its networks run by `runners` (P-Net, R-Net, O-Net; outputs: box
 * regression first, then face probability), in place of OpenCV's DNN. */
int dcv_mtcnn_detect_with(dcv_mtcnn *net, const dcv_network_runner *runners, const dcv_image *image, float min_face,
                          const float *thresholds, dcv_box *out, int capacity, dcv_status *status);

/* ---- single-object visual trackers (opencv_contrib tracking module) ---------------------- */

typedef struct dcv_tracker dcv_tracker;

typedef enum dcv_tracker_kind {
    DCV_TRACKER_CSRT = 0, /* cv::TrackerCSRT: discriminative correlation filter with channel and
                             spatial reliability; follows fast, blurred motion; ~30 ms a frame */
    DCV_TRACKER_KCF = 1   /* cv::TrackerKCF: kernelized correlation filter; ~7 ms, loses fast motion */
} dcv_tracker_kind;

dcv_tracker *dcv_tracker_create(int kind, dcv_status *status);
void dcv_tracker_destroy(dcv_tracker *tracker);
/* Starts tracking the box (pixels, top-left origin) in `image`. Returns 0, or -1 on error. */
int dcv_tracker_start(dcv_tracker *tracker, const dcv_image *image, float x, float y,
                      float width, float height, dcv_status *status);
/* Follows the box into `image`: 1 and the new box in *out when found, 0 when the tracker lost
 * it, -1 on error. */
int dcv_tracker_update(dcv_tracker *tracker, const dcv_image *image, dcv_box *out,
                       dcv_status *status);

#ifdef __cplusplus
}
#endif

#endif /* DOCKCV_H */
