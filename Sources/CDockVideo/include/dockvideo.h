/*
 * dockvideo.h: the C face of DockTrack's video file writer (FFmpeg: libavformat, libavcodec,
 * libswscale from Debian).
 *
 * Why this exists: OpenCV 4.6's VideoWriter encodes H.264 with x264 at its default preset
 * ("medium", trellis quantization on), which took a third of `docktrack reframe`'s CPU time at
 * 720p, and gives no way to ask for another (its OPENCV_FFMPEG_WRITER_OPTIONS reach only
 * hardware acceleration). This writes BGR frames through FFmpeg's encoder API with the preset
 * the caller names. It does no picture processing beyond the one colour conversion (BGR to the
 * encoder's YUV 4:2:0). Rules, as in the other shims:
 *
 *   - A writer is an opaque handle with an open and a close function.
 *   - Functions that can fail fill a dvideo_status (code + one-line message) and return NULL or
 *     a negative number.
 */
#ifndef DOCKVIDEO_H
#define DOCKVIDEO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dvideo_code {
    DVIDEO_OK = 0,
    DVIDEO_ERR_ARGUMENT = 1, /* a size, rate or frame the writer cannot take */
    DVIDEO_ERR_OPEN = 2,     /* no container for the name, no encoder, or the file cannot be made */
    DVIDEO_ERR_WRITE = 3     /* encoding or writing failed midway */
} dvideo_code;

typedef struct dvideo_status {
    int code;          /* a dvideo_code */
    char message[256]; /* one line; empty when code == DVIDEO_OK */
} dvideo_status;

typedef struct dvideo_writer dvideo_writer;

/* A video file at `path` (the container follows its name: .mp4, .mov, .mkv, ...) for frames of
 * `width` x `height` (even numbers) at `fps` frames a second. H.264 by libx264 at `preset`
 * ("ultrafast" ... "veryslow"; NULL: x264's default) and constant quality `crf` (0...51; 23 is
 * x264's default); MPEG-4 part 2 where FFmpeg has no H.264 encoder. */
dvideo_writer *dvideo_writer_open(const char *path, int width, int height, double fps, const char *preset, int crf,
                                  dvideo_status *status);
/* The encoder's name ("libx264", "mpeg4"). */
const char *dvideo_writer_codec(const dvideo_writer *writer);
/* Encodes one frame: `height` rows of `width` BGR pixels, `stride` bytes apart. Returns 0, or -1. */
int dvideo_writer_write_bgr(dvideo_writer *writer, const uint8_t *pixels, int stride, dvideo_status *status);
/* Encodes what the encoder holds back, finishes the file and frees the writer (NULL is a no-op).
 * Returns 0, or -1 when the end could not be written (the writer is freed all the same). */
int dvideo_writer_close(dvideo_writer *writer, dvideo_status *status);

#ifdef __cplusplus
}
#endif

#endif
