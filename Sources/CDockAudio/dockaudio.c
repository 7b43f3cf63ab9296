// dockaudio.c: see include/dockaudio.h.
#include "dockaudio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <alsa/asoundlib.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

static void set_status(daudio_status *status, int code, const char *format, ...) {
    if (status == NULL) return;
    status->code = code;
    va_list args;
    va_start(args, format);
    vsnprintf(status->message, sizeof status->message, format, args);
    va_end(args);
}

static void clear_status(daudio_status *status) {
    if (status == NULL) return;
    status->code = DAUDIO_OK;
    status->message[0] = 0;
}

static const char *av_error_text(int error, char *buffer, size_t size) {
    av_strerror(error, buffer, size);
    return buffer;
}

/* ---- files ---------------------------------------------------------------------------------- */

struct daudio_file {
    AVFormatContext *format;
    AVCodecContext *codec;
    SwrContext *resampler;
    AVPacket *packet;
    AVFrame *frame;
    int stream;
    int rate;
    /* Converted samples not yet handed out. */
    float *pending;
    long pending_count, pending_offset, pending_capacity;
    double pending_time;
    int ended;
};

daudio_file *daudio_file_open(const char *path, int rate, daudio_status *status) {
    clear_status(status);
    av_log_set_level(AV_LOG_QUIET);
    char text[128];
    daudio_file *file = calloc(1, sizeof *file);
    if (file == NULL) return NULL;
    file->rate = rate;
    int error = avformat_open_input(&file->format, path, NULL, NULL);
    if (error < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "%s", av_error_text(error, text, sizeof text));
        free(file);
        return NULL;
    }
    if ((error = avformat_find_stream_info(file->format, NULL)) < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "%s", av_error_text(error, text, sizeof text));
        daudio_file_close(file);
        return NULL;
    }
    const AVCodec *decoder = NULL;
    file->stream = av_find_best_stream(file->format, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0);
    if (file->stream < 0 || decoder == NULL) {
        set_status(status, DAUDIO_ERR_NO_AUDIO, file->stream == AVERROR_DECODER_NOT_FOUND ? "no decoder for its audio" : "no audio track");
        daudio_file_close(file);
        return NULL;
    }
    AVStream *stream = file->format->streams[file->stream];
    file->codec = avcodec_alloc_context3(decoder);
    if (file->codec == NULL || avcodec_parameters_to_context(file->codec, stream->codecpar) < 0 ||
        avcodec_open2(file->codec, decoder, NULL) < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "cannot open the %s audio decoder", decoder->name);
        daudio_file_close(file);
        return NULL;
    }
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    AVChannelLayout input = file->codec->ch_layout;
    if (input.order == AV_CHANNEL_ORDER_UNSPEC) av_channel_layout_default(&input, input.nb_channels);
    if (swr_alloc_set_opts2(&file->resampler, &mono, AV_SAMPLE_FMT_FLT, rate, &input,
                            file->codec->sample_fmt, file->codec->sample_rate, 0, NULL) < 0 ||
        swr_init(file->resampler) < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "cannot resample %d Hz audio", file->codec->sample_rate);
        daudio_file_close(file);
        return NULL;
    }
    file->packet = av_packet_alloc();
    file->frame = av_frame_alloc();
    return file;
}

void daudio_file_close(daudio_file *file) {
    if (file == NULL) return;
    swr_free(&file->resampler);
    avcodec_free_context(&file->codec);
    avformat_close_input(&file->format);
    av_packet_free(&file->packet);
    av_frame_free(&file->frame);
    free(file->pending);
    free(file);
}

int daudio_file_source_rate(const daudio_file *file) { return file->codec->sample_rate; }
int daudio_file_source_channels(const daudio_file *file) { return file->codec->ch_layout.nb_channels; }
double daudio_file_duration(const daudio_file *file) {
    AVStream *stream = file->format->streams[file->stream];
    if (stream->duration > 0) return stream->duration * av_q2d(stream->time_base);
    if (file->format->duration > 0) return (double)file->format->duration / AV_TIME_BASE;
    return 0;
}

/* Converts the decoded frame (or flushes the resampler when frame == NULL) into pending. */
static int convert(daudio_file *file, AVFrame *frame) {
    int in_count = frame ? frame->nb_samples : 0;
    int out_capacity = swr_get_out_samples(file->resampler, in_count) + 32;
    if (out_capacity > file->pending_capacity) {
        float *grown = realloc(file->pending, sizeof(float) * out_capacity);
        if (grown == NULL) return -1;
        file->pending = grown;
        file->pending_capacity = out_capacity;
    }
    uint8_t *out[1] = {(uint8_t *)file->pending};
    int converted = swr_convert(file->resampler, out, out_capacity,
                                frame ? (const uint8_t **)frame->extended_data : NULL, in_count);
    if (converted < 0) return -1;
    AVStream *stream = file->format->streams[file->stream];
    if (frame && frame->best_effort_timestamp != AV_NOPTS_VALUE) {
        /* The resampler's delay is subtracted so the time is that of the first output sample. */
        double delay = (double)swr_get_delay(file->resampler, file->rate) / file->rate;
        double start = frame->best_effort_timestamp * av_q2d(stream->time_base);
        if (stream->start_time != AV_NOPTS_VALUE) start -= stream->start_time * av_q2d(stream->time_base);
        file->pending_time = start - delay + (double)in_count / file->codec->sample_rate - (double)converted / file->rate;
        if (file->pending_time < 0 && start >= 0) file->pending_time = 0;
    }
    file->pending_count = converted;
    file->pending_offset = 0;
    return 0;
}

long daudio_file_read(daudio_file *file, float *out, long capacity, double *start_time,
                      daudio_status *status) {
    clear_status(status);
    while (file->pending_offset >= file->pending_count) {
        if (file->ended) return 0;
        int error = avcodec_receive_frame(file->codec, file->frame);
        if (error == 0) {
            if (convert(file, file->frame) < 0) {
                set_status(status, DAUDIO_ERR_READ, "resampling failed");
                return -1;
            }
            av_frame_unref(file->frame);
            continue;
        }
        if (error == AVERROR_EOF) {
            file->ended = 1;
            if (convert(file, NULL) < 0) return 0;
            file->pending_time += 0;
            continue;
        }
        /* The decoder wants input: the next packet of the audio stream. */
        error = av_read_frame(file->format, file->packet);
        if (error == AVERROR_EOF) {
            avcodec_send_packet(file->codec, NULL);
            continue;
        }
        if (error < 0) {
            char text[128];
            set_status(status, DAUDIO_ERR_READ, "%s", av_error_text(error, text, sizeof text));
            return -1;
        }
        if (file->packet->stream_index == file->stream) {
            /* A corrupt packet is skipped (its samples are missing), as players do. */
            avcodec_send_packet(file->codec, file->packet);
        }
        av_packet_unref(file->packet);
    }
    long count = file->pending_count - file->pending_offset;
    if (count > capacity) count = capacity;
    memcpy(out, file->pending + file->pending_offset, sizeof(float) * count);
    *start_time = file->pending_time + (double)file->pending_offset / file->rate;
    file->pending_offset += count;
    return count;
}

/* ---- ALSA capture -------------------------------------------------------------------------- */

struct daudio_capture {
    snd_pcm_t *pcm;
    int rate;
};

daudio_capture *daudio_capture_open(const char *device, int rate, daudio_status *status) {
    clear_status(status);
    snd_pcm_t *pcm = NULL;
    int error = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK);
    if (error < 0) {
        set_status(status, error == -EBUSY ? DAUDIO_ERR_OPEN : DAUDIO_ERR_OPEN, "%s", snd_strerror(error));
        return NULL;
    }
    /* Float, mono, `rate` Hz, about 40 ms of latency; alsa-lib's plug layer converts. */
    error = snd_pcm_set_params(pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1,
                               (unsigned)rate, 1, 40000);
    if (error < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "%s", snd_strerror(error));
        snd_pcm_close(pcm);
        return NULL;
    }
    snd_pcm_start(pcm);
    daudio_capture *capture = calloc(1, sizeof *capture);
    capture->pcm = pcm;
    capture->rate = rate;
    return capture;
}

void daudio_capture_close(daudio_capture *capture) {
    if (capture == NULL) return;
    snd_pcm_close(capture->pcm);
    free(capture);
}

long daudio_capture_read(daudio_capture *capture, float *out, long capacity, int timeout_ms,
                         long *lost, daudio_status *status) {
    clear_status(status);
    *lost = 0;
    int ready = snd_pcm_wait(capture->pcm, timeout_ms);
    if (ready == 0) return 0;
    snd_pcm_sframes_t count = snd_pcm_readi(capture->pcm, out, (snd_pcm_uframes_t)capacity);
    if (count == -EAGAIN) return 0;
    if (count == -EPIPE) { /* overrun: samples were lost; start again */
        *lost = capture->rate / 25;
        snd_pcm_prepare(capture->pcm);
        snd_pcm_start(capture->pcm);
        return 0;
    }
    if (count == -ENODEV || count == -EBADFD || count == -ESTRPIPE || count == -EIO) {
        set_status(status, DAUDIO_ERR_GONE, "%s", snd_strerror((int)count));
        return -1;
    }
    if (count < 0) {
        set_status(status, DAUDIO_ERR_READ, "%s", snd_strerror((int)count));
        return -1;
    }
    return (long)count;
}

int daudio_capture_devices(char *out, size_t capacity) {
    void **hints = NULL;
    int found = 0;
    size_t used = 0;
    if (capacity > 0) out[0] = 0;
    if (snd_device_name_hint(-1, "pcm", &hints) < 0) return 0;
    for (void **hint = hints; *hint != NULL; hint++) {
        char *name = snd_device_name_get_hint(*hint, "NAME");
        char *description = snd_device_name_get_hint(*hint, "DESC");
        char *io = snd_device_name_get_hint(*hint, "IOID");
        if (name != NULL && (io == NULL || strcmp(io, "Input") == 0)) {
            int n = snprintf(out + used, capacity > used ? capacity - used : 0, "%s\t%s\n", name,
                             description ? description : "");
            for (char *c = out + used; n > 0 && c < out + used + n && c < out + capacity; c++) {
                if (*c == '\n' && c != out + used + n - 1) *c = ' ';
            }
            if (n > 0 && used + (size_t)n < capacity) used += (size_t)n;
            found++;
        }
        free(name);
        free(description);
        free(io);
    }
    snd_device_name_free_hint(hints);
    return found;
}
