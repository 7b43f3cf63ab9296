// OpenVINO's C API behind dockengine.h: the library loaded with dlopen, each function looked up
// once by name with the type its header declares.
#define _GNU_SOURCE
#include "dockengine.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openvino/c/openvino.h>

const char *const dengine_library_name = "libopenvino_c.so.2641";

/// The functions the shim calls, looked up in the loaded library.
typedef struct {
    __typeof__(ov_core_create) *core_create;
    __typeof__(ov_core_free) *core_free;
    __typeof__(ov_core_read_model) *core_read_model;
    __typeof__(ov_core_compile_model) *core_compile_model;
    __typeof__(ov_model_free) *model_free;
    __typeof__(ov_model_reshape_single_input) *model_reshape_single_input;
    __typeof__(ov_partial_shape_create_static) *partial_shape_create_static;
    __typeof__(ov_partial_shape_free) *partial_shape_free;
    __typeof__(ov_compiled_model_create_infer_request) *compiled_model_create_infer_request;
    __typeof__(ov_compiled_model_get_property) *compiled_model_get_property;
    __typeof__(ov_compiled_model_free) *compiled_model_free;
    __typeof__(ov_infer_request_get_input_tensor_by_index) *infer_request_get_input_tensor_by_index;
    __typeof__(ov_infer_request_set_input_tensor_by_index) *infer_request_set_input_tensor_by_index;
    __typeof__(ov_infer_request_get_output_tensor_by_index) *infer_request_get_output_tensor_by_index;
    __typeof__(ov_infer_request_infer) *infer_request_infer;
    __typeof__(ov_infer_request_free) *infer_request_free;
    __typeof__(ov_tensor_data) *tensor_data;
    __typeof__(ov_tensor_get_shape) *tensor_get_shape;
    __typeof__(ov_tensor_get_size) *tensor_get_size;
    __typeof__(ov_tensor_get_element_type) *tensor_get_element_type;
    __typeof__(ov_tensor_free) *tensor_free;
    __typeof__(ov_tensor_create_from_host_ptr) *tensor_create_from_host_ptr;
    __typeof__(ov_shape_create) *shape_create;
    __typeof__(ov_shape_free) *shape_free;
    __typeof__(ov_free) *free_string;
    __typeof__(ov_get_error_info) *get_error_info;
    __typeof__(ov_get_last_err_msg) *get_last_err_msg;
    __typeof__(ov_get_openvino_version) *get_openvino_version;
    __typeof__(ov_version_free) *version_free;
    // Property names, as the library spells them.
    const char *const *key_num_streams;
    const char *const *key_inference_num_threads;
    const char *const *key_performance_mode;
    const char *const *key_inference_precision;
} dengine_api;

struct dengine_engine {
    dengine_api api;
    ov_core_t *core;
    char version[128];
    /* Where compiled networks are kept between runs (OpenVINO's CACHE_DIR); "" for nowhere. */
    char cache_folder[4096];
};

struct dengine_network {
    const dengine_api *api;
    ov_compiled_model_t *compiled;
    ov_infer_request_t *request;
    ov_tensor_t *input;
    ov_tensor_t *outputs[8];
};

static void set_status(dengine_status *status, const char *format, ...) {
    if (!status) return;
    va_list args;
    va_start(args, format);
    vsnprintf(status->message, sizeof status->message, format, args);
    va_end(args);
}

/// The engine's own words for a failed call: its last error message, else the status's name.
static void set_engine_status(const dengine_api *api, dengine_status *status, const char *what, ov_status_e code) {
    const char *detail = api->get_last_err_msg ? api->get_last_err_msg() : NULL;
    if (!detail || !*detail) detail = api->get_error_info ? api->get_error_info(code) : "unknown error";
    // OpenVINO's messages run over several lines with a source location first; keep them whole
    // but on one line.
    char flat[400];
    snprintf(flat, sizeof flat, "%s", detail);
    for (char *c = flat; *c; c++) if (*c == '\n' || *c == '\r') *c = ' ';
    set_status(status, "%s: %s", what, flat);
}

#define LOOK_UP(field, symbol)                                                        \
    do {                                                                              \
        *(void **)(&engine->api.field) = dlsym(library, #symbol);                     \
        if (!engine->api.field) {                                                     \
            set_status(status, "%s lacks %s: not OpenVINO 2026.4", path, #symbol);    \
            free(engine);                                                             \
            return NULL;                                                              \
        }                                                                             \
    } while (0)

dengine_engine *dengine_engine_open(const char *library_folder, dengine_status *status) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", library_folder ? library_folder : ".", dengine_library_name);
    // RTLD_LOCAL: OpenVINO's symbols stay out of the program's namespace. The library is never
    // closed: its plugins register global state that outlives a core.
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        set_status(status, "%s", reason ? reason : path);
        return NULL;
    }
    dengine_engine *engine = calloc(1, sizeof *engine);
    if (!engine) { set_status(status, "out of memory"); return NULL; }
    LOOK_UP(core_create, ov_core_create);
    LOOK_UP(core_free, ov_core_free);
    LOOK_UP(core_read_model, ov_core_read_model);
    LOOK_UP(core_compile_model, ov_core_compile_model);
    LOOK_UP(model_free, ov_model_free);
    LOOK_UP(model_reshape_single_input, ov_model_reshape_single_input);
    LOOK_UP(partial_shape_create_static, ov_partial_shape_create_static);
    LOOK_UP(partial_shape_free, ov_partial_shape_free);
    LOOK_UP(compiled_model_create_infer_request, ov_compiled_model_create_infer_request);
    LOOK_UP(compiled_model_get_property, ov_compiled_model_get_property);
    LOOK_UP(compiled_model_free, ov_compiled_model_free);
    LOOK_UP(infer_request_get_input_tensor_by_index, ov_infer_request_get_input_tensor_by_index);
    LOOK_UP(infer_request_set_input_tensor_by_index, ov_infer_request_set_input_tensor_by_index);
    LOOK_UP(infer_request_get_output_tensor_by_index, ov_infer_request_get_output_tensor_by_index);
    LOOK_UP(infer_request_infer, ov_infer_request_infer);
    LOOK_UP(infer_request_free, ov_infer_request_free);
    LOOK_UP(tensor_data, ov_tensor_data);
    LOOK_UP(tensor_get_shape, ov_tensor_get_shape);
    LOOK_UP(tensor_get_size, ov_tensor_get_size);
    LOOK_UP(tensor_get_element_type, ov_tensor_get_element_type);
    LOOK_UP(tensor_free, ov_tensor_free);
    LOOK_UP(tensor_create_from_host_ptr, ov_tensor_create_from_host_ptr);
    LOOK_UP(shape_create, ov_shape_create);
    LOOK_UP(shape_free, ov_shape_free);
    LOOK_UP(free_string, ov_free);
    LOOK_UP(get_error_info, ov_get_error_info);
    LOOK_UP(get_last_err_msg, ov_get_last_err_msg);
    LOOK_UP(get_openvino_version, ov_get_openvino_version);
    LOOK_UP(version_free, ov_version_free);
    LOOK_UP(key_num_streams, ov_property_key_num_streams);
    LOOK_UP(key_inference_num_threads, ov_property_key_inference_num_threads);
    LOOK_UP(key_performance_mode, ov_property_key_hint_performance_mode);
    LOOK_UP(key_inference_precision, ov_property_key_hint_inference_precision);

    ov_status_e code = engine->api.core_create(&engine->core);
    if (code != OK) {
        set_engine_status(&engine->api, status, "creating OpenVINO's core", code);
        free(engine);
        return NULL;
    }
    ov_version_t version = {0};
    if (engine->api.get_openvino_version(&version) == OK) {
        snprintf(engine->version, sizeof engine->version, "%s", version.buildNumber ? version.buildNumber : "");
        engine->api.version_free(&version);
    }
    return engine;
}

const char *dengine_engine_version(const dengine_engine *engine) { return engine ? engine->version : ""; }

int dengine_engine_set_cache_folder(dengine_engine *engine, const char *folder) {
    if (!engine) return -1;
    if (!folder) { engine->cache_folder[0] = 0; return 0; }
    if (strlen(folder) >= sizeof engine->cache_folder) return -1;
    snprintf(engine->cache_folder, sizeof engine->cache_folder, "%s", folder);
    return 0;
}

/* Compiles `model` for the CPU: `threads` inference threads, one stream, the latency hint, and
   when given the inference precision and the cache folder. The property list is variadic (key,
   value pairs after their count), so each combination is its own call. */
static ov_status_e compile_for_cpu(const dengine_engine *engine, ov_model_t *model, const char *threads,
                                   const char *precision, const char *cache, ov_compiled_model_t **compiled) {
    const dengine_api *api = &engine->api;
    const char *threads_key = *api->key_inference_num_threads, *streams_key = *api->key_num_streams;
    const char *mode_key = *api->key_performance_mode, *precision_key = *api->key_inference_precision;
    if (precision && cache)
        return api->core_compile_model(engine->core, model, "CPU", 10, compiled, threads_key, threads, streams_key, "1",
                                       mode_key, "LATENCY", precision_key, precision, "CACHE_DIR", cache);
    if (precision)
        return api->core_compile_model(engine->core, model, "CPU", 8, compiled, threads_key, threads, streams_key, "1",
                                       mode_key, "LATENCY", precision_key, precision);
    if (cache)
        return api->core_compile_model(engine->core, model, "CPU", 8, compiled, threads_key, threads, streams_key, "1",
                                       mode_key, "LATENCY", "CACHE_DIR", cache);
    return api->core_compile_model(engine->core, model, "CPU", 6, compiled, threads_key, threads, streams_key, "1",
                                   mode_key, "LATENCY");
}

void dengine_engine_destroy(dengine_engine *engine) {
    if (!engine) return;
    engine->api.core_free(engine->core);
    free(engine);
}

dengine_network *dengine_network_open(dengine_engine *engine, const char *model_path, const int64_t *input_shape, int rank,
                                      int threads, const char *precision, dengine_status *status) {
    if (!engine || !model_path) { set_status(status, "no engine or no model path"); return NULL; }
    const dengine_api *api = &engine->api;
    ov_model_t *model = NULL;
    ov_status_e code = api->core_read_model(engine->core, model_path, NULL, &model);
    if (code != OK) { set_engine_status(api, status, "reading the model", code); return NULL; }
    if (rank > 0) {
        ov_partial_shape_t shape;
        code = api->partial_shape_create_static(rank, input_shape, &shape);
        if (code == OK) {
            code = api->model_reshape_single_input(model, shape);
            api->partial_shape_free(&shape);
        }
        if (code != OK) {
            set_engine_status(api, status, "setting the input shape", code);
            api->model_free(model);
            return NULL;
        }
    }
    char thread_count[16];
    snprintf(thread_count, sizeof thread_count, "%d", threads > 0 ? threads : 0);
    ov_compiled_model_t *compiled = NULL;
    const char *precision_given = precision && *precision ? precision : NULL;
    const char *cache = engine->cache_folder[0] ? engine->cache_folder : NULL;
    code = compile_for_cpu(engine, model, thread_count, precision_given, cache, &compiled);
    // A cache that cannot be read or written is no reason to fail: compiled again without it.
    if (code != OK && cache) code = compile_for_cpu(engine, model, thread_count, precision_given, NULL, &compiled);
    api->model_free(model);
    if (code != OK) { set_engine_status(api, status, "compiling the model for the CPU", code); return NULL; }
    dengine_network *network = calloc(1, sizeof *network);
    if (!network) { api->compiled_model_free(compiled); set_status(status, "out of memory"); return NULL; }
    network->api = api;
    network->compiled = compiled;
    code = api->compiled_model_create_infer_request(compiled, &network->request);
    // A model left with its own dynamic input has no input buffer until one is given
    // (dengine_network_run_on).
    if (code == OK) {
        code = api->infer_request_get_input_tensor_by_index(network->request, 0, &network->input);
        if (code != OK && rank == 0) { network->input = NULL; code = OK; }
    }
    if (code != OK) {
        set_engine_status(api, status, "creating the inference request", code);
        dengine_network_destroy(network);
        return NULL;
    }
    return network;
}

void dengine_network_destroy(dengine_network *network) {
    if (!network) return;
    const dengine_api *api = network->api;
    for (size_t i = 0; i < sizeof network->outputs / sizeof network->outputs[0]; i++)
        if (network->outputs[i]) api->tensor_free(network->outputs[i]);
    if (network->input) api->tensor_free(network->input);
    if (network->request) api->infer_request_free(network->request);
    if (network->compiled) api->compiled_model_free(network->compiled);
    free(network);
}

float *dengine_network_input(dengine_network *network, size_t *count, dengine_status *status) {
    const dengine_api *api = network->api;
    if (!network->input) { set_status(status, "the network's input shape is dynamic: give it one with each run"); return NULL; }
    ov_element_type_e type;
    ov_status_e code = api->tensor_get_element_type(network->input, &type);
    if (code == OK && type != F32) { set_status(status, "the model's input is not float32"); return NULL; }
    void *data = NULL;
    if (code == OK) code = api->tensor_get_size(network->input, count);
    if (code == OK) code = api->tensor_data(network->input, &data);
    if (code != OK) { set_engine_status(api, status, "reading the input buffer", code); return NULL; }
    return data;
}

int dengine_network_run(dengine_network *network, dengine_status *status) {
    ov_status_e code = network->api->infer_request_infer(network->request);
    if (code != OK) { set_engine_status(network->api, status, "running the network", code); return -1; }
    return 0;
}

int dengine_network_run_on(dengine_network *network, float *input, const int64_t *shape, int rank, dengine_status *status) {
    const dengine_api *api = network->api;
    if (!input || !shape || rank <= 0) { set_status(status, "no input or no shape"); return -1; }
    ov_shape_t dims = {0};
    ov_tensor_t *tensor = NULL;
    ov_status_e code = api->shape_create(rank, shape, &dims);
    if (code == OK) {
        code = api->tensor_create_from_host_ptr(F32, dims, input, &tensor);
        api->shape_free(&dims);
    }
    if (code == OK) code = api->infer_request_set_input_tensor_by_index(network->request, 0, tensor);
    if (tensor) api->tensor_free(tensor);
    if (code != OK) { set_engine_status(api, status, "giving the network its input", code); return -1; }
    // The outputs' shapes follow the input's: their tensors are asked for again after this run.
    for (size_t i = 0; i < sizeof network->outputs / sizeof network->outputs[0]; i++) {
        if (network->outputs[i]) api->tensor_free(network->outputs[i]);
        network->outputs[i] = NULL;
    }
    return dengine_network_run(network, status);
}

const float *dengine_network_output(dengine_network *network, int index, int64_t *shape, int shape_capacity, int *rank,
                                    dengine_status *status) {
    const dengine_api *api = network->api;
    const int slots = (int)(sizeof network->outputs / sizeof network->outputs[0]);
    if (index < 0 || index >= slots) { set_status(status, "no output %d", index); return NULL; }
    ov_status_e code = OK;
    if (!network->outputs[index])
        code = api->infer_request_get_output_tensor_by_index(network->request, (size_t)index, &network->outputs[index]);
    if (code != OK) { set_engine_status(api, status, "reading an output", code); return NULL; }
    ov_tensor_t *tensor = network->outputs[index];
    ov_element_type_e type;
    code = api->tensor_get_element_type(tensor, &type);
    if (code == OK && type != F32) { set_status(status, "output %d is not float32", index); return NULL; }
    ov_shape_t dims = {0};
    if (code == OK) code = api->tensor_get_shape(tensor, &dims);
    if (code != OK) { set_engine_status(api, status, "reading an output's shape", code); return NULL; }
    if (dims.rank > shape_capacity) {
        set_status(status, "output %d has %lld dimensions, room for %d", index, (long long)dims.rank, shape_capacity);
        api->shape_free(&dims);
        return NULL;
    }
    for (int64_t i = 0; i < dims.rank; i++) shape[i] = dims.dims[i];
    *rank = (int)dims.rank;
    api->shape_free(&dims);
    void *data = NULL;
    code = api->tensor_data(tensor, &data);
    if (code != OK) { set_engine_status(api, status, "reading an output's data", code); return NULL; }
    return data;
}

int dengine_network_precision(const dengine_network *network, char *out, size_t capacity) {
    char *value = NULL;
    if (network->api->compiled_model_get_property(network->compiled, *network->api->key_inference_precision, &value) != OK || !value) {
        snprintf(out, capacity, "?");
        return -1;
    }
    snprintf(out, capacity, "%s", value);
    network->api->free_string(value);
    return 0;
}
