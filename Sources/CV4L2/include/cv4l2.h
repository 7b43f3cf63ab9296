/*
 * cv4l2.h: the C face of DockTrack's V4L2 access.
 *
 * Why this exists: ioctl(2) is variadic and the VIDIOC_* request numbers are function-like
 * macros, and Swift imports neither. This header gives one non-variadic ioctl that retries
 * EINTR and returns errno, and the request numbers as constants. The structs and control ids
 * come from <linux/videodev2.h> (linux-libc-dev) and are used from Swift directly.
 */
#ifndef CV4L2_H
#define CV4L2_H

#include <linux/videodev2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ioctl(fd, request, arg), retried while it fails with EINTR. Returns 0, or the errno. */
int cv4l2_ioctl(int fd, unsigned long request, void *arg);

/* The request numbers. */
extern const unsigned long CV4L2_VIDIOC_QUERYCAP;
extern const unsigned long CV4L2_VIDIOC_G_CTRL;
extern const unsigned long CV4L2_VIDIOC_S_CTRL;
extern const unsigned long CV4L2_VIDIOC_QUERYCTRL;

#ifdef __cplusplus
}
#endif

#endif /* CV4L2_H */
