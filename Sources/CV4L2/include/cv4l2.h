/*
 * cv4l2.h: the C face of DockTrack's V4L2 access.
 *
 * Why this exists: ioctl(2) is variadic and the VIDIOC_* request numbers are function-like
 * macros, and Swift imports neither; libv4lconvert wants a table of C function pointers. This
 * header gives:
 *   - one non-variadic ioctl that returns errno (retrying EINTR is the Swift caller's job, in one
 *     place, so a fake device in tests goes through the same retry),
 *   - the request numbers as constants,
 *   - a pixel-format converter (libv4lconvert) whose own ioctls go through a callback, so that
 *     they reach the same device object as every other ioctl (the real node, PipeWire's
 *     LD_PRELOADed emulation, or a fake in tests) instead of libv4lconvert's raw syscalls.
 * The structs and control ids come from <linux/videodev2.h> and are used from Swift directly.
 */
#ifndef CV4L2_H
#define CV4L2_H

#include <stddef.h>
#include <linux/videodev2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ioctl(fd, request, arg) once. Returns 0, or the errno (EINTR included). */
int cv4l2_ioctl(int fd, unsigned long request, void *arg);

/* The request numbers. */
extern const unsigned long CV4L2_VIDIOC_QUERYCAP;
extern const unsigned long CV4L2_VIDIOC_ENUM_FMT;
extern const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS;
extern const unsigned long CV4L2_VIDIOC_G_FMT;
extern const unsigned long CV4L2_VIDIOC_S_FMT;
extern const unsigned long CV4L2_VIDIOC_G_PARM;
extern const unsigned long CV4L2_VIDIOC_S_PARM;
extern const unsigned long CV4L2_VIDIOC_REQBUFS;
extern const unsigned long CV4L2_VIDIOC_QUERYBUF;
extern const unsigned long CV4L2_VIDIOC_QBUF;
extern const unsigned long CV4L2_VIDIOC_DQBUF;
extern const unsigned long CV4L2_VIDIOC_STREAMON;
extern const unsigned long CV4L2_VIDIOC_STREAMOFF;
extern const unsigned long CV4L2_VIDIOC_G_CTRL;
extern const unsigned long CV4L2_VIDIOC_S_CTRL;
extern const unsigned long CV4L2_VIDIOC_QUERYCTRL;

/* ---- pixel-format conversion (libv4lconvert) ---------------------------------------------- */

/* An ioctl on the caller's device: 0 or the errno. */
typedef int (*cv4l2_ioctl_callback)(void *context, unsigned long request, void *arg);

typedef struct cv4l2_converter cv4l2_converter;

/* A converter for the device behind `callback` (called with `context`); `fd` is the device's
 * file descriptor when there is one (libv4lconvert reads USB ids through it), else -1.
 * NULL when libv4lconvert cannot be set up. */
cv4l2_converter *cv4l2_converter_create(int fd, void *context, cv4l2_ioctl_callback callback);
void cv4l2_converter_destroy(cv4l2_converter *converter);
/* Copies `count` bytes out of a mapped capture buffer without faulting: reads through
 * process_vm_readv on this process, so a buffer its driver unmapped under the reader (PipeWire's
 * V4L2 emulation unmaps a dequeued buffer when its source goes away) gives -1 with errno EFAULT
 * instead of SIGSEGV. Where process_vm_readv is not allowed, a plain memcpy. Returns `count`. */
long cv4l2_copy_mapped(void *destination, const void *source, size_t count);

/* Converts one frame from `source_format` to `destination_format` (v4lconvert_convert).
 * Returns the bytes written, or -1 (message from cv4l2_converter_error). */
int cv4l2_converter_convert(cv4l2_converter *converter, const struct v4l2_format *source_format,
                            const struct v4l2_format *destination_format,
                            unsigned char *source, int source_size,
                            unsigned char *destination, int destination_size);
/* The last conversion error, one line. */
const char *cv4l2_converter_error(cv4l2_converter *converter);

#ifdef __cplusplus
}
#endif

#endif /* CV4L2_H */
