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

/* ---- a video with another file's sound -------------------------------------------------------- */

/* One input of daudio_mux: a file, the stream taken from it, its output stream, its next packet. */
typedef struct mux_input {
    AVFormatContext *format;
    int stream;
    AVStream *out;
    AVPacket *packet;
    int pending; /* `packet` holds the next packet of `stream` */
} mux_input;

/* Reads `input`'s next packet of its stream; 0 at its end, -1 on an error. */
static int mux_next(mux_input *input) {
    for (;;) {
        av_packet_unref(input->packet);
        int error = av_read_frame(input->format, input->packet);
        if (error == AVERROR_EOF) return 0;
        if (error < 0) return -1;
        if (input->packet->stream_index == input->stream) return 1;
    }
}

/* The packet's time in seconds (its dts, else pts; 0 when it has neither). */
static double mux_time(const mux_input *input) {
    AVStream *stream = input->format->streams[input->stream];
    int64_t ts = input->packet->dts != AV_NOPTS_VALUE ? input->packet->dts : input->packet->pts;
    return ts == AV_NOPTS_VALUE ? 0 : ts * av_q2d(stream->time_base);
}

static int mux_open(mux_input *input, const char *path, enum AVMediaType type, daudio_status *status) {
    char text[128];
    int error = avformat_open_input(&input->format, path, NULL, NULL);
    if (error >= 0) error = avformat_find_stream_info(input->format, NULL);
    if (error < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "%s: %s", path, av_error_text(error, text, sizeof text));
        return -1;
    }
    input->stream = av_find_best_stream(input->format, type, -1, -1, NULL, 0);
    input->packet = av_packet_alloc();
    return input->packet == NULL ? -1 : 0;
}

static void mux_close(mux_input *input) {
    av_packet_free(&input->packet);
    if (input->format != NULL) avformat_close_input(&input->format);
}

int daudio_mux(const char *video_path, const char *audio_path, double start, double end, const char *out,
               daudio_status *status) {
    clear_status(status);
    av_log_set_level(AV_LOG_QUIET);
    char text[128];
    mux_input video = {0}, audio = {0};
    AVFormatContext *output = NULL;
    int result = -1, copied = 0;
    if (mux_open(&video, video_path, AVMEDIA_TYPE_VIDEO, status) < 0) goto done;
    if (video.stream < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "%s: no video stream", video_path);
        goto done;
    }
    int error = avformat_alloc_output_context2(&output, NULL, NULL, out);
    if (error < 0 || output == NULL) {
        set_status(status, DAUDIO_ERR_OPEN, "%s: %s", out, error < 0 ? av_error_text(error, text, sizeof text) : "unknown container");
        goto done;
    }
    if (mux_open(&audio, audio_path, AVMEDIA_TYPE_AUDIO, status) < 0) goto done;
    if (audio.stream < 0) {
        set_status(status, DAUDIO_ERR_NO_AUDIO, "%s: no audio track", audio_path);
    } else {
        enum AVCodecID codec = audio.format->streams[audio.stream]->codecpar->codec_id;
        if (avformat_query_codec(output->oformat, codec, FF_COMPLIANCE_NORMAL) != 1) {
            set_status(status, DAUDIO_ERR_NO_AUDIO, "its %s sound cannot go into %s", avcodec_get_name(codec), output->oformat->name);
            audio.stream = -1;
        }
    }
    mux_input *inputs[2] = {&video, &audio};
    for (int i = 0; i < 2; i++) {
        mux_input *input = inputs[i];
        if (input->stream < 0) continue;
        AVStream *source = input->format->streams[input->stream];
        input->out = avformat_new_stream(output, NULL);
        if (input->out == NULL || avcodec_parameters_copy(input->out->codecpar, source->codecpar) < 0) {
            set_status(status, DAUDIO_ERR_READ, "cannot add a stream to %s", out);
            goto done;
        }
        input->out->codecpar->codec_tag = 0;
        input->out->time_base = source->time_base;
        if (i == 0) input->out->avg_frame_rate = source->avg_frame_rate;
    }
    if (!(output->oformat->flags & AVFMT_NOFILE) && (error = avio_open(&output->pb, out, AVIO_FLAG_WRITE)) < 0) {
        set_status(status, DAUDIO_ERR_OPEN, "%s: %s", out, av_error_text(error, text, sizeof text));
        goto done;
    }
    if ((error = avformat_write_header(output, NULL)) < 0) {
        set_status(status, DAUDIO_ERR_READ, "%s: %s", out, av_error_text(error, text, sizeof text));
        goto done;
    }
    for (int i = 0; i < 2; i++) {
        if (inputs[i]->stream < 0) continue;
        if ((inputs[i]->pending = mux_next(inputs[i])) < 0) {
            set_status(status, DAUDIO_ERR_READ, "reading the input failed");
            goto done;
        }
    }
    /* The earlier of the two next packets goes first (the interleaver sorts what is left). */
    while (video.pending > 0 || audio.pending > 0) {
        mux_input *input = video.pending <= 0 ? &audio
                         : audio.pending <= 0 ? &video
                         : (mux_time(&audio) - start < mux_time(&video) ? &audio : &video);
        AVPacket *packet = input->packet;
        int keep = 1;
        if (input == &audio) {
            double t = mux_time(&audio);
            keep = t >= start - 1e-9 && (end <= 0 || t < end);
            if (keep) {
                /* Moved back by `start`, in the stream's time base. */
                int64_t shift = (int64_t)llround(start / av_q2d(audio.format->streams[audio.stream]->time_base));
                if (packet->pts != AV_NOPTS_VALUE) packet->pts -= shift;
                if (packet->dts != AV_NOPTS_VALUE) packet->dts -= shift;
            }
        }
        if (keep) {
            av_packet_rescale_ts(packet, input->format->streams[input->stream]->time_base, input->out->time_base);
            packet->stream_index = input->out->index;
            packet->pos = -1;
            if ((error = av_interleaved_write_frame(output, packet)) < 0) {
                set_status(status, DAUDIO_ERR_READ, "%s: %s", out, av_error_text(error, text, sizeof text));
                goto done;
            }
            if (input == &audio) copied = 1;
        }
        if ((input->pending = mux_next(input)) < 0) {
            set_status(status, DAUDIO_ERR_READ, "reading the input failed");
            goto done;
        }
    }
    if ((error = av_write_trailer(output)) < 0) {
        set_status(status, DAUDIO_ERR_READ, "%s: %s", out, av_error_text(error, text, sizeof text));
        goto done;
    }
    if (copied) clear_status(status);
    result = copied;
done:
    if (output != NULL) {
        if (!(output->oformat->flags & AVFMT_NOFILE)) avio_closep(&output->pb);
        avformat_free_context(output);
    }
    mux_close(&video);
    mux_close(&audio);
    return result;
}
