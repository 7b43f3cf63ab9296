// The thin shim over DockTrack's inference engine, OpenVINO's C API (PyPI wheel, pinned by
// tools/install-openvino.sh). Why it exists:
//
// - OpenVINO's library is loaded with dlopen when a detector first needs it, not linked: a
//   program that never runs a network (docksim, the client, `docktrack plot`) starts without it,
//   and a missing engine is an error the caller words, not the dynamic loader's.
// - `ov_core_compile_model` is variadic, which Swift cannot call: dengine_network_open passes
//   its properties in a fixed list.
// - Swift sees only this header: opaque handles with create/destroy pairs, int status codes
//   and a message buffer; nothing of OpenVINO's own types crosses it.
//
// One dengine_network is one compiled model and one inference request at a fixed input shape:
// its input and output buffers stay where they are between runs, so a caller fills the input
// in place (no copy) and reads the output in place. A network belongs to one thread at a time.
#ifndef DOCKENGINE_H
#define DOCKENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What went wrong, in words (filled by every call that can fail).
typedef struct {
    char message[512];
} dengine_status;

/// The loaded engine: OpenVINO's library and one ov_core.
typedef struct dengine_engine dengine_engine;
/// A compiled model with its inference request.
typedef struct dengine_network dengine_network;

/// The name of the library file loaded from the folder given to dengine_engine_open.
extern const char *const dengine_library_name;

/// Loads `libopenvino_c` from `library_folder` and creates an OpenVINO core. NULL on failure
/// (the library is not there, or lacks a function the shim calls), with `status` filled.
dengine_engine *dengine_engine_open(const char *library_folder, dengine_status *status);
/// The engine's version ("2026.4.1-..."), or "" when it cannot tell.
const char *dengine_engine_version(const dengine_engine *engine);
/// Frees the core. The library stays loaded (OpenVINO's plugins are not safe to unload).
/// Every network opened from the engine must be destroyed first.
void dengine_engine_destroy(dengine_engine *engine);

/// Keeps compiled networks in `folder` (OpenVINO's CACHE_DIR, which must exist) for later runs
/// and processes: a network compiled before is loaded from there instead of compiled again.
/// NULL keeps none. -1 when the path is too long.
int dengine_engine_set_cache_folder(dengine_engine *engine, const char *folder);

/// Reads the model at `model_path` (ONNX or TFLite), sets its single input to the static shape
/// `input_shape` (`rank` dimensions; rank 0 keeps the model's own), compiles it for the CPU with
/// `threads` inference threads (0: the engine's choice), one stream, the latency hint and the
/// inference precision `precision` ("f32", "bf16", or NULL for the engine's default), through
/// the engine's cache folder when it has one (compiled without it when that fails), and
/// creates its inference request. NULL on failure, with `status` filled.
dengine_network *dengine_network_open(dengine_engine *engine, const char *model_path, const int64_t *input_shape, int rank,
                                      int threads, const char *precision, dengine_status *status);
void dengine_network_destroy(dengine_network *network);

/// The network's input buffer (float32, the shape it was opened with) and its element count,
/// to be filled before dengine_network_run. NULL on failure.
float *dengine_network_input(dengine_network *network, size_t *count, dengine_status *status);
/// Runs the network on its input buffer (synchronously). 0 on success, -1 on failure.
int dengine_network_run(dengine_network *network, dengine_status *status);
/// Runs the network on `input` (float32, `rank` dimensions in `shape`), the caller's buffer, read
/// in place: for a network opened with rank 0 whose model's input size is not fixed (MTCNN's
/// proposal network over each picture of a pyramid). The buffer must stay alive and unchanged
/// until the run returns. 0 on success, -1 on failure.
int dengine_network_run_on(dengine_network *network, float *input, const int64_t *shape, int rank, dengine_status *status);
/// Output `index` after a run: its float32 data (owned by the network, valid until the next
/// run), and its shape in `shape` (at most `shape_capacity` dimensions; their number in
/// `rank`). NULL on failure (no such output, not float32, or more dimensions than room).
const float *dengine_network_output(dengine_network *network, int index, int64_t *shape, int shape_capacity, int *rank,
                                    dengine_status *status);
/// The precision the compiled model infers in ("f32", "bf16", ...), written into `out`.
int dengine_network_precision(const dengine_network *network, char *out, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
