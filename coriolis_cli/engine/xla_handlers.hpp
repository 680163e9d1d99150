// The engine's kernels as XLA foreign functions, for JAX (jax.ffi) on the CPU: coriolis_cli.jax
// calls them from jitted programs. They are written against XLA's stable C API alone
// (third_party/xla/ffi/api/c_api.h, API version 0.1, which jaxlib 0.7.2 and later accept), so
// that the core builds without JAX. No Python in this file: XLA calls a handler with the GIL
// released, on the thread that runs the program, possibly on several threads at once.
//
// A call carries the robot's id (register_model), the gravity and the threads as attributes,
// and its states as buffers of shape (..., nq) and (..., nv) with the same leading dimensions
// (vmap_method="broadcast_all"): a batch is one call, on the batch kernels' threads. A state
// the NumPy functions refuse (not finite, a singular M) gives NaN outputs, as JAX's own
// functions do; the outputs the robot cannot fill are zero.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/batch.hpp"
#include "core/engine.hpp"
#include "xla/ffi/api/c_api.h"

namespace coriolis::xla {

// ---- the robots the handlers know -------------------------------------------------------------
// Kept for the process's life: a compiled program may hold an id as long as it exists.
struct Registry {
    std::mutex mutex;
    std::vector<std::unique_ptr<const Model>> models;
};

inline Registry& registry() {
    static Registry r;
    return r;
}

inline int64_t register_model(const Model& model) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.models.push_back(std::make_unique<const Model>(model));
    return int64_t(r.models.size()) - 1;
}

inline const Model* model_of(int64_t id) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return id >= 0 && id < int64_t(r.models.size()) ? r.models[id].get() : nullptr;
}

// one workspace per robot and thread, for the calls of one state
inline Data& workspace_of(int64_t id, const Model& model) {
    thread_local std::unordered_map<int64_t, std::unique_ptr<Data>> workspaces;
    std::unique_ptr<Data>& w = workspaces[id];
    if (!w) w = std::make_unique<Data>(model);
    return *w;
}

// ---- the C API's call frame -------------------------------------------------------------------
// XLA's probe at registration: the handler states its API version and nothing else (the frame's
// api may be null then)
inline bool answered_metadata(XLA_FFI_CallFrame* frame) {
    XLA_FFI_Extension_Base* extension = frame->extension_start;
    if (extension == nullptr || extension->type != XLA_FFI_Extension_Metadata) return false;
    XLA_FFI_Metadata* metadata = reinterpret_cast<XLA_FFI_Metadata_Extension*>(extension)->metadata;
    metadata->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    metadata->api_version.extension_start = nullptr;
    metadata->api_version.major_version = XLA_FFI_API_MAJOR;
    metadata->api_version.minor_version = XLA_FFI_API_MINOR;
    metadata->traits = 0;
    return true;
}

inline XLA_FFI_Error* error(XLA_FFI_CallFrame* frame, const std::string& message) {
    XLA_FFI_Error_Create_Args args;
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.message = message.c_str();  // XLA copies it
    args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return frame->api->XLA_FFI_Error_Create(&args);
}

inline XLA_FFI_Buffer* buffer(XLA_FFI_CallFrame* frame, int64_t i, bool output) {
    if (output)
        return i < frame->rets.size && frame->rets.types[i] == XLA_FFI_RetType_BUFFER
                   ? static_cast<XLA_FFI_Buffer*>(frame->rets.rets[i])
                   : nullptr;
    return i < frame->args.size && frame->args.types[i] == XLA_FFI_ArgType_BUFFER
               ? static_cast<XLA_FFI_Buffer*>(frame->args.args[i])
               : nullptr;
}

inline const XLA_FFI_Scalar* attribute(XLA_FFI_CallFrame* frame, const char* name, XLA_FFI_DataType type) {
    const size_t length = std::strlen(name);
    for (int64_t i = 0; i < frame->attrs.size; ++i) {
        const XLA_FFI_ByteSpan* key = frame->attrs.names[i];
        if (key->len == length && std::memcmp(key->ptr, name, length) == 0 &&
            frame->attrs.types[i] == XLA_FFI_AttrType_SCALAR) {
            const auto* scalar = static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[i]);
            return scalar->dtype == type ? scalar : nullptr;
        }
    }
    return nullptr;
}

inline int64_t elements(const XLA_FFI_Buffer* b) {
    int64_t n = 1;
    for (int64_t d = 0; d < b->rank; ++d) n *= b->dims[d];
    return n;
}

// [i, j, k] = ∂C_ij/∂q_k into dC (nv³), column by column of C (Slotine–Li's derivatives at
// q̇_r = e_j, q̈_r = 0, without gravity: ∂(C e_j)/∂q); the scratch is this thread's own
inline int64_t coriolis_matrix_derivatives(const Model& model, Data& d, const double* q, const double* qd,
                                           double* dC) {
    const int n = model.nv;
    thread_local std::vector<double> unit, dq, dv;
    unit.assign(n, 0.0);
    dq.resize(size_t(n) * n);
    dv.resize(size_t(n) * n);
    for (int j = 0; j < n; ++j) {
        unit[j] = 1.0;
        std::fill(dq.begin(), dq.end(), 0.0);
        const int64_t status = slotine_li_derivatives(model, d, q, qd, unit.data(), d.zero.data(), NO_GRAVITY,
                                                      CHRISTOFFEL, dq.data(), dv.data(), nullptr, nullptr);
        unit[j] = 0.0;
        if (failed(status)) return status;
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < n; ++k) dC[(int64_t(i) * n + j) * n + k] = dq[size_t(i) * n + k];
    }
    return OK;
}

// ---- one handler per kernel ---------------------------------------------------------------------
// Kernel: (model, data, q, velocities, gravity, outputs) → status. `V` velocity-like inputs after
// q; `sizes`: each output's doubles per state in units of nv^power (1: vectors, 2: matrices, 3: Γ).
template <int V, int OUTPUTS, typename Kernel>
XLA_FFI_Error* run(XLA_FFI_CallFrame* frame, const char* name, const int (&powers)[OUTPUTS], Kernel kernel) {
    if (answered_metadata(frame)) return nullptr;
    if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return nullptr;
    const XLA_FFI_Scalar* id = attribute(frame, "robot", XLA_FFI_DataType_S64);
    const XLA_FFI_Scalar* threads = attribute(frame, "threads", XLA_FFI_DataType_S64);
    const XLA_FFI_Scalar* g[3] = {attribute(frame, "gx", XLA_FFI_DataType_F64),
                                  attribute(frame, "gy", XLA_FFI_DataType_F64),
                                  attribute(frame, "gz", XLA_FFI_DataType_F64)};
    if (!id || !threads || !g[0] || !g[1] || !g[2])
        return error(frame, std::string(name) + ": expected the int64 attributes robot and threads and the float64 "
                                                "gx, gy, gz");
    const Model* model = model_of(*static_cast<const int64_t*>(id->value));
    if (!model) return error(frame, std::string(name) + ": no robot of this id");
    const int n = model->nv, nq = model->nq;
    const double gravity[3] = {*static_cast<const double*>(g[0]->value), *static_cast<const double*>(g[1]->value),
                               *static_cast<const double*>(g[2]->value)};
    // the states: q, then V vectors of nv, all float64 with one batch
    const XLA_FFI_Buffer* q = buffer(frame, 0, false);
    if (!q || q->dtype != XLA_FFI_DataType_F64 || q->rank < 1 || q->dims[q->rank - 1] != nq)
        return error(frame, std::string(name) + ": q must be float64 of shape (..., " + std::to_string(nq) + ")");
    const int64_t K = elements(q) / nq;
    const double* states[V > 0 ? V : 1];
    for (int k = 0; k < V; ++k) {
        const XLA_FFI_Buffer* b = buffer(frame, 1 + k, false);
        if (!b || b->dtype != XLA_FFI_DataType_F64 || elements(b) != K * n)
            return error(frame, std::string(name) + ": input " + std::to_string(1 + k) +
                                    " must be float64 with q's batch and " + std::to_string(n) + " entries a state");
        states[k] = static_cast<const double*>(b->data);
    }
    double* outputs[OUTPUTS];
    int64_t per_state[OUTPUTS];
    for (int k = 0; k < OUTPUTS; ++k) {
        XLA_FFI_Buffer* b = buffer(frame, k, true);
        per_state[k] = powers[k] == 1 ? n : powers[k] == 2 ? int64_t(n) * n : int64_t(n) * n * n;
        if (!b || b->dtype != XLA_FFI_DataType_F64 || elements(b) != K * per_state[k])
            return error(frame, std::string(name) + ": output " + std::to_string(k) + " has the wrong shape");
        outputs[k] = static_cast<double*>(b->data);
    }
    const double* Q = static_cast<const double*>(q->data);
    auto one = [&](Data& data, int64_t s) {
        const double* v[V > 0 ? V : 1];
        for (int k = 0; k < V; ++k) v[k] = states[k] + s * n;
        double* out[OUTPUTS];
        for (int k = 0; k < OUTPUTS; ++k) {
            out[k] = outputs[k] + s * per_state[k];
            std::fill(out[k], out[k] + per_state[k], 0.0);  // XLA's buffers hold anything
        }
        const int64_t status = kernel(*model, data, Q + s * nq, v, gravity, out);
        if (failed(status))
            for (int k = 0; k < OUTPUTS; ++k)
                std::fill(out[k], out[k] + per_state[k], std::numeric_limits<double>::quiet_NaN());
    };
    const int64_t asked = *static_cast<const int64_t*>(threads->value);
    try {
        if (K == 1 || asked <= 1) {
            Data& data = workspace_of(*static_cast<const int64_t*>(id->value), *model);
            for (int64_t s = 0; s < K; ++s) one(data, s);
        } else {
            run_batch(*model, K, int(asked), [&](Data& data, int64_t s) { one(data, s); });
        }
    } catch (const std::exception& e) {  // a workspace that cannot be allocated
        return error(frame, std::string(name) + ": " + e.what());
    }
    return nullptr;
}

// each handler and its outputs' powers of nv (NAME_powers, which HANDLERS hands to Python too)
#define CORIOLIS_XLA_HANDLER(NAME, V, POWERS, BODY)                                                            \
    inline constexpr int NAME##_powers[] = POWERS;                                                             \
    extern "C" inline XLA_FFI_Error* NAME(XLA_FFI_CallFrame* frame) {                                          \
        return run<V>(frame, #NAME, NAME##_powers,                                                             \
                      [](const Model& model, Data& d, const double* q, const double* const* v, const double* g, \
                         double* const* out) -> int64_t { BODY });                                             \
    }
#define CORIOLIS_POWERS(...) {__VA_ARGS__}

CORIOLIS_XLA_HANDLER(coriolis_mass_matrix, 0, CORIOLIS_POWERS(2), (void)g; (void)v;
                     return compute_mass_matrix(model, d, q, out[0]);)
CORIOLIS_XLA_HANDLER(coriolis_inverse_dynamics, 2, CORIOLIS_POWERS(1),
                     return compute_inverse_dynamics(model, d, q, v[0], v[1], g, out[0]);)
CORIOLIS_XLA_HANDLER(coriolis_gravity_vector, 0, CORIOLIS_POWERS(1), (void)v;
                     return compute_gravity_vector(model, d, q, g, out[0]);)
CORIOLIS_XLA_HANDLER(coriolis_forward_dynamics, 2, CORIOLIS_POWERS(1),
                     return compute_forward_dynamics(model, d, q, v[0], v[1], g, out[0], d.M.data());)
CORIOLIS_XLA_HANDLER(coriolis_christoffel, 0, CORIOLIS_POWERS(3), (void)g; (void)v;
                     return christoffel(model, d, q, out[0]);)
CORIOLIS_XLA_HANDLER(coriolis_inverse_dynamics_derivatives, 2, CORIOLIS_POWERS(2, 2, 2),
                     return rnea_derivatives(model, d, q, v[0], v[1], g, out[0], out[1], out[2]);)
CORIOLIS_XLA_HANDLER(coriolis_forward_dynamics_derivatives, 2, CORIOLIS_POWERS(2, 2, 2),
                     return forward_dynamics_derivatives(model, d, q, v[0], v[1], g, out[0], out[1], out[2]);)
CORIOLIS_XLA_HANDLER(coriolis_gravity_derivatives, 0, CORIOLIS_POWERS(2), (void)v;
                     return gravity_derivatives(model, d, q, g, out[0]);)

CORIOLIS_XLA_HANDLER(coriolis_coriolis_matrix, 1, CORIOLIS_POWERS(2, 2, 2), (void)g;
                     return coriolis_matrix(model, d, q, v[0], CHRISTOFFEL, out[0], out[1], out[2]);)
CORIOLIS_XLA_HANDLER(coriolis_coriolis_product_derivatives, 2, CORIOLIS_POWERS(2, 2), (void)g;
                     return slotine_li_derivatives(model, d, q, v[0], v[1], d.zero.data(), NO_GRAVITY, CHRISTOFFEL,
                                                   out[0], out[1], nullptr, nullptr);)
CORIOLIS_XLA_HANDLER(coriolis_momentum, 1, CORIOLIS_POWERS(1, 1), (void)g;
                     return momentum(model, d, q, v[0], out[0], out[1]);)
CORIOLIS_XLA_HANDLER(coriolis_momentum_derivatives, 1, CORIOLIS_POWERS(2), (void)g;
                     return momentum_derivatives(model, d, q, v[0], out[0]);)
CORIOLIS_XLA_HANDLER(coriolis_coriolis_transpose_derivatives, 1, CORIOLIS_POWERS(2, 2), (void)g;
                     return coriolis_transpose_derivatives(model, d, q, v[0], out[0], out[1]);)
// ∂C/∂q, [i, j, k] = ∂C_ij/∂q_k: column j of C is C e_j, whose derivatives Slotine–Li's give
// (q̇_r = e_j, q̈_r = 0, no gravity), one column at a time (as coriolis_matrix_derivatives composes it)
CORIOLIS_XLA_HANDLER(coriolis_coriolis_matrix_derivatives, 1, CORIOLIS_POWERS(3), (void)g;
                     return coriolis_matrix_derivatives(model, d, q, v[0], out[0]);)

CORIOLIS_XLA_HANDLER(coriolis_inverse_dynamics_second_derivatives, 2, CORIOLIS_POWERS(3, 3, 3, 3),
                     return rnea_second_derivatives(model, d, q, v[0], v[1], g, out[0], out[1], out[2], out[3]);)

#undef CORIOLIS_POWERS
#undef CORIOLIS_XLA_HANDLER

// name → handler and its outputs' powers of nv, for the binding to hand to jax.ffi.register_ffi_target
using Handler = XLA_FFI_Error* (*)(XLA_FFI_CallFrame*);
struct Named {
    const char* name;
    Handler handler;
    const int* powers;
    int outputs;
};
#define CORIOLIS_XLA_ENTRY(NAME) {#NAME, NAME, NAME##_powers, int(sizeof(NAME##_powers) / sizeof(int))}
inline constexpr Named HANDLERS[] = {
    CORIOLIS_XLA_ENTRY(coriolis_mass_matrix),
    CORIOLIS_XLA_ENTRY(coriolis_inverse_dynamics),
    CORIOLIS_XLA_ENTRY(coriolis_gravity_vector),
    CORIOLIS_XLA_ENTRY(coriolis_forward_dynamics),
    CORIOLIS_XLA_ENTRY(coriolis_christoffel),
    CORIOLIS_XLA_ENTRY(coriolis_inverse_dynamics_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_forward_dynamics_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_gravity_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_coriolis_matrix),
    CORIOLIS_XLA_ENTRY(coriolis_coriolis_product_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_momentum),
    CORIOLIS_XLA_ENTRY(coriolis_momentum_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_coriolis_transpose_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_coriolis_matrix_derivatives),
    CORIOLIS_XLA_ENTRY(coriolis_inverse_dynamics_second_derivatives),
};
#undef CORIOLIS_XLA_ENTRY

}  // namespace coriolis::xla
