/* dockvideo.c: see include/dockvideo.h. */
#include "dockvideo.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dvideo_writer {
    AVFormatContext *format;
    AVCodecContext *codec;
    AVStream *stream;
    struct SwsContext *convert;
    AVFrame *frame;
    AVPacket *packet;
    int64_t next_pts;
    int width, height;
    int header_written;
};

static void set_status(dvideo_status *status, int code, const char *format, ...) {
    if (!status) return;
    status->code = code;
    va_list args;
    va_start(args, format);
    vsnprintf(status->message, sizeof status->message, format, args);
    va_end(args);
}

static void clear_status(dvideo_status *status) {
    if (!status) return;
    status->code = DVIDEO_OK;
    status->message[0] = 0;
}

static const char *error_text(int error, char *text, size_t size) {
    if (av_strerror(error, text, size) < 0) snprintf(text, size, "FFmpeg error %d", error);
    return text;
}

static void release(dvideo_writer *writer) {
    if (!writer) return;
    sws_freeContext(writer->convert);
    av_frame_free(&writer->frame);
    av_packet_free(&writer->packet);
    avcodec_free_context(&writer->codec);
    if (writer->format) {
        if (!(writer->format->oformat->flags & AVFMT_NOFILE)) avio_closep(&writer->format->pb);
        avformat_free_context(writer->format);
    }
    free(writer);
}

/* Sends `frame` (NULL: the end) to the encoder and writes every packet it gives back. */
static int encode(dvideo_writer *writer, AVFrame *frame, dvideo_status *status) {
    char text[128];
    int error = avcodec_send_frame(writer->codec, frame);
    if (error < 0) {
        set_status(status, DVIDEO_ERR_WRITE, "encoding: %s", error_text(error, text, sizeof text));
        return -1;
    }
    for (;;) {
        error = avcodec_receive_packet(writer->codec, writer->packet);
        if (error == AVERROR(EAGAIN) || error == AVERROR_EOF) return 0;
        if (error < 0) {
            set_status(status, DVIDEO_ERR_WRITE, "encoding: %s", error_text(error, text, sizeof text));
            return -1;
        }
        av_packet_rescale_ts(writer->packet, writer->codec->time_base, writer->stream->time_base);
        writer->packet->stream_index = writer->stream->index;
        error = av_interleaved_write_frame(writer->format, writer->packet);
        if (error < 0) {
            set_status(status, DVIDEO_ERR_WRITE, "writing: %s", error_text(error, text, sizeof text));
            return -1;
        }
    }
}

dvideo_writer *dvideo_writer_open(const char *path, int width, int height, double fps, const char *preset, int crf,
                                  dvideo_status *status) {
    clear_status(status);
    av_log_set_level(AV_LOG_QUIET);
    char text[128];
    if (!path || width < 2 || height < 2 || width % 2 || height % 2 || width > 16384 || height > 16384) {
        set_status(status, DVIDEO_ERR_ARGUMENT, "a video needs an even width and height from 2 to 16384, not %dx%d", width, height);
        return NULL;
    }
    if (!isfinite(fps) || fps <= 0 || fps > 1000) {
        set_status(status, DVIDEO_ERR_ARGUMENT, "a video needs 0 to 1000 frames a second, not %g", fps);
        return NULL;
    }
    dvideo_writer *writer = calloc(1, sizeof *writer);
    if (!writer) {
        set_status(status, DVIDEO_ERR_OPEN, "out of memory");
        return NULL;
    }
    writer->width = width;
    writer->height = height;
    int error = avformat_alloc_output_context2(&writer->format, NULL, NULL, path);
    if (error < 0 || !writer->format) {
        set_status(status, DVIDEO_ERR_OPEN, "no container for the name %s", path);
        goto fail;
    }
    const AVCodec *encoder = avcodec_find_encoder_by_name("libx264");
    if (!encoder) encoder = avcodec_find_encoder(AV_CODEC_ID_H264);
    if (!encoder) encoder = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (!encoder) {
        set_status(status, DVIDEO_ERR_OPEN, "FFmpeg has neither an H.264 nor an MPEG-4 encoder here");
        goto fail;
    }
    writer->codec = avcodec_alloc_context3(encoder);
    writer->packet = av_packet_alloc();
    writer->frame = av_frame_alloc();
    if (!writer->codec || !writer->packet || !writer->frame) {
        set_status(status, DVIDEO_ERR_OPEN, "out of memory");
        goto fail;
    }
    AVRational rate = av_d2q(fps, 100000);
    writer->codec->width = width;
    writer->codec->height = height;
    writer->codec->pix_fmt = AV_PIX_FMT_YUV420P;
    writer->codec->framerate = rate;
    writer->codec->time_base = av_inv_q(rate);
    if (writer->format->oformat->flags & AVFMT_GLOBALHEADER) writer->codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (strcmp(encoder->name, "libx264") == 0) {
        if (preset && av_opt_set(writer->codec->priv_data, "preset", preset, 0) < 0) {
            set_status(status, DVIDEO_ERR_ARGUMENT, "x264 has no preset '%s'", preset);
            goto fail;
        }
        av_opt_set_double(writer->codec->priv_data, "crf", crf < 0 ? 0 : crf > 51 ? 51 : crf, 0);
    } else {
        /* MPEG-4 part 2: a fixed quantizer of about x264's default quality. */
        writer->codec->flags |= AV_CODEC_FLAG_QSCALE;
        writer->codec->global_quality = FF_QP2LAMBDA * 4;
    }
    error = avcodec_open2(writer->codec, encoder, NULL);
    if (error < 0) {
        set_status(status, DVIDEO_ERR_OPEN, "cannot open the %s encoder: %s", encoder->name, error_text(error, text, sizeof text));
        goto fail;
    }
    writer->stream = avformat_new_stream(writer->format, NULL);
    if (!writer->stream || avcodec_parameters_from_context(writer->stream->codecpar, writer->codec) < 0) {
        set_status(status, DVIDEO_ERR_OPEN, "cannot add a video stream to %s", path);
        goto fail;
    }
    writer->stream->time_base = writer->codec->time_base;
    writer->stream->avg_frame_rate = rate;
    if (!(writer->format->oformat->flags & AVFMT_NOFILE)) {
        error = avio_open(&writer->format->pb, path, AVIO_FLAG_WRITE);
        if (error < 0) {
            set_status(status, DVIDEO_ERR_OPEN, "%s: %s", path, error_text(error, text, sizeof text));
            goto fail;
        }
    }
    error = avformat_write_header(writer->format, NULL);
    if (error < 0) {
        set_status(status, DVIDEO_ERR_OPEN, "%s: %s", path, error_text(error, text, sizeof text));
        goto fail;
    }
    writer->header_written = 1;
    writer->frame->format = AV_PIX_FMT_YUV420P;
    writer->frame->width = width;
    writer->frame->height = height;
    if (av_frame_get_buffer(writer->frame, 0) < 0) {
        set_status(status, DVIDEO_ERR_OPEN, "out of memory");
        goto fail;
    }
    writer->convert = sws_getContext(width, height, AV_PIX_FMT_BGR24, width, height, AV_PIX_FMT_YUV420P,
                                     SWS_BILINEAR, NULL, NULL, NULL);
    if (!writer->convert) {
        set_status(status, DVIDEO_ERR_OPEN, "cannot convert BGR to YUV 4:2:0");
        goto fail;
    }
    return writer;
fail:
    release(writer);
    return NULL;
}

const char *dvideo_writer_codec(const dvideo_writer *writer) {
    return writer && writer->codec && writer->codec->codec ? writer->codec->codec->name : "";
}

int dvideo_writer_write_bgr(dvideo_writer *writer, const uint8_t *pixels, int stride, dvideo_status *status) {
    clear_status(status);
    if (!writer || !pixels || stride < writer->width * 3) {
        set_status(status, DVIDEO_ERR_ARGUMENT, "a frame of %dx%d BGR pixels needs rows of at least %d bytes",
                   writer ? writer->width : 0, writer ? writer->height : 0, writer ? writer->width * 3 : 0);
        return -1;
    }
    /* The encoder may still hold the last frame's buffer: write into a buffer of our own. */
    if (av_frame_make_writable(writer->frame) < 0) {
        set_status(status, DVIDEO_ERR_WRITE, "out of memory");
        return -1;
    }
    const uint8_t *planes[1] = {pixels};
    const int strides[1] = {stride};
    sws_scale(writer->convert, planes, strides, 0, writer->height, writer->frame->data, writer->frame->linesize);
    writer->frame->pts = writer->next_pts++;
    return encode(writer, writer->frame, status);
}

int dvideo_writer_close(dvideo_writer *writer, dvideo_status *status) {
    clear_status(status);
    if (!writer) return 0;
    int result = 0;
    if (writer->header_written) {
        if (encode(writer, NULL, status) < 0) result = -1;
        int error = av_write_trailer(writer->format);
        if (error < 0 && result == 0) {
            char text[128];
            set_status(status, DVIDEO_ERR_WRITE, "finishing the file: %s", error_text(error, text, sizeof text));
            result = -1;
        }
    }
    release(writer);
    return result;
}
