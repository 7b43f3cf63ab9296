/*
 * dockaudio.h: the C face of DockTrack's audio input.
 *
 * Why this exists: FFmpeg's libraries (libavformat, libavcodec, libswresample from Debian) and
 * ALSA (libasound2) are C APIs built around macros, variadic calls and structs Swift handles
 * badly. This header is the whole surface DockTrack uses; it does no signal processing. Rules:
 *
 *   - Every input is an opaque handle with an open and a close function.
 *   - Samples come out as mono 32-bit float in -1...1 at the rate asked for (resampled and
 *     downmixed here, in one place).
 *   - Functions that can fail fill a daudio_status (code + one-line message) and return NULL or
 *     a negative number.
 */
#ifndef DOCKAUDIO_H
#define DOCKAUDIO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum daudio_code {
    DAUDIO_OK = 0,
    DAUDIO_ERR_OPEN = 1,     /* the file or device cannot be opened */
    DAUDIO_ERR_NO_AUDIO = 2, /* a media file without an audio stream */
    DAUDIO_ERR_READ = 3,     /* reading or decoding failed midway */
    DAUDIO_ERR_GONE = 4      /* a capture device went away (unplugged) */
} daudio_code;

typedef struct daudio_status {
    int code;          /* a daudio_code */
    char message[256]; /* one line; empty when code == DAUDIO_OK */
} daudio_status;

/* ---- the audio track of a media file (FFmpeg) ---------------------------------------------- */

typedef struct daudio_file daudio_file;

/* Opens the best audio stream of `path`, to be delivered mono at `rate` Hz. */
daudio_file *daudio_file_open(const char *path, int rate, daudio_status *status);
void daudio_file_close(daudio_file *file);
/* The stream's own sample rate and channel count, and its duration in seconds (0 if unknown). */
int daudio_file_source_rate(const daudio_file *file);
int daudio_file_source_channels(const daudio_file *file);
double daudio_file_duration(const daudio_file *file);
/* Up to `capacity` samples into `out`. Returns the count (0 at the end), or -1 on an error.
 * `start_time` gets the time in seconds of the first sample returned, from the stream's
 * timestamps (corrupt packets are skipped, as players do). */
long daudio_file_read(daudio_file *file, float *out, long capacity, double *start_time,
                      daudio_status *status);

/* ---- a video with another file's sound (FFmpeg, no re-encoding) ---------------------------- */

/* Writes `out` (the container follows its name) with the video stream of `video_path` and the
 * best audio stream of `audio_path`, both copied packet by packet and interleaved by time. Audio
 * before `start` seconds of `audio_path`, or from `end` on (`end` <= 0: to its end), is left out
 * and the rest is moved back by `start`. Returns 1 when the sound was copied; 0 when there was
 * none to copy, or the container cannot hold its codec (the video alone is written, and
 * `status` says why); -1 on an error. */
int daudio_mux(const char *video_path, const char *audio_path, double start, double end, const char *out,
               daudio_status *status);

/* ---- ALSA capture ---------------------------------------------------------------------------- */

typedef struct daudio_capture daudio_capture;

/* Opens the ALSA PCM `device` ("default", "hw:1,0", "null", ...) for capture, mono at `rate`. */
daudio_capture *daudio_capture_open(const char *device, int rate, daudio_status *status);
void daudio_capture_close(daudio_capture *capture);
/* Waits up to `timeout_ms` and reads up to `capacity` samples. Returns the count (0 when none
 * arrived in time), or -1 (DAUDIO_ERR_GONE when the device went away). Overruns are recovered
 * here (the lost samples are reported as the count of `*lost`). */
long daudio_capture_read(daudio_capture *capture, float *out, long capacity, int timeout_ms,
                         long *lost, daudio_status *status);

/* The ALSA PCM devices that can capture, as "name\tdescription\n" lines into `out` (NUL-ended,
 * truncated to `capacity`). Returns the number of devices. */
int daudio_capture_devices(char *out, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* DOCKAUDIO_H */
