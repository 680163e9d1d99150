// The one file that knows Python: the C++ core (core/*.hpp) bound with nanobind.
//
// Arrays reach the kernels as plain handles checked with the NumPy C API: nb::ndarray costs more
// per call than a whole small kernel. An argument that is not a float64 vector of the right length
// with unit stride makes a call return RECHECK (−1): the Python layer converts and checks it in
// full, with the messages that name the DoF, and calls again. Outputs are the caller's own arrays
// and must be exactly right (they are made by the library, never by users).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <numpy/arrayobject.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/base_velocity.hpp"
#include "core/batch.hpp"
#include "core/closure.hpp"
#include "core/engine.hpp"
#include "core/filters.hpp"
#include "core/local_fit.hpp"
#include "core/observer.hpp"
#include "core/timing.hpp"

namespace nb = nanobind;
using namespace coriolis;

namespace {

constexpr int64_t RECHECK = -1;

// A Model and one workspace for it: what Python holds as engine Data's core.
struct Workspace {
    Model model;
    Data data;
    explicit Workspace(Model m) : model(std::move(m)), data(model) {}
};

bool is_double_array(PyObject* o) {
    if (!PyArray_Check(o)) return false;
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(a) && PyArray_ISALIGNED(a);
}

// the doubles of a float64 vector of n entries with unit stride, else nullptr (RECHECK)
const double* vector_in(nb::handle h, npy_intp n) {
    PyObject* o = h.ptr();
    if (!is_double_array(o)) return nullptr;
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n) return nullptr;
    if (n > 1 && PyArray_STRIDE(a, 0) != npy_intp(sizeof(double))) return nullptr;
    return static_cast<const double*>(PyArray_DATA(a));
}

// a writable C-contiguous float64 output of the given shape, else ValueError
double* array_out(nb::handle h, std::initializer_list<npy_intp> shape, const char* what) {
    PyObject* o = h.ptr();
    bool ok = is_double_array(o);
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    ok = ok && PyArray_NDIM(a) == int(shape.size()) && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a);
    int d = 0;
    for (npy_intp s : shape) ok = ok && PyArray_DIM(a, d++) == s;
    if (!ok) throw nb::value_error((std::string(what) + ": expected a writable C-contiguous float64 array of the "
                                                        "robot's shape")
                                       .c_str());
    return static_cast<double*>(PyArray_DATA(a));
}

// the model's three arrays, checked once when a workspace is made (not a hot path)
template <typename T>
std::vector<T> copy_table(nb::handle h, npy_intp rows, npy_intp width, int type, const char* what) {
    PyObject* o = PyArray_FROMANY(h.ptr(), type, 2, 2, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!o) throw nb::python_error();
    nb::object owner = nb::steal(o);
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    if (PyArray_DIM(a, 0) != rows || PyArray_DIM(a, 1) != width)
        throw nb::value_error((std::string(what) + " has the wrong shape").c_str());
    const T* p = static_cast<const T*>(PyArray_DATA(a));
    return std::vector<T>(p, p + rows * width);
}

// a C-contiguous float64 array of the given shape, read only
const double* array_in(nb::handle h, std::initializer_list<npy_intp> shape, const char* what) {
    PyObject* o = h.ptr();
    bool ok = is_double_array(o);
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    ok = ok && PyArray_NDIM(a) == int(shape.size()) && PyArray_IS_C_CONTIGUOUS(a);
    int d = 0;
    for (npy_intp s : shape) ok = ok && PyArray_DIM(a, d++) == s;
    if (!ok) throw nb::value_error((std::string(what) + ": expected a C-contiguous float64 array of the robot's shape")
                                       .c_str());
    return static_cast<const double*>(PyArray_DATA(a));
}

// the batches' status vector: K writable contiguous int64
int64_t* status_out(nb::handle h, npy_intp K) {
    PyObject* o = h.ptr();
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    if (!PyArray_Check(o) || PyArray_TYPE(a) != NPY_INT64 || PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != K ||
        !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a))
        throw nb::value_error("status: expected a writable int64 vector of one entry per state");
    return static_cast<int64_t*>(PyArray_DATA(a));
}

// the status of each of K states, kernel(data, s), on `threads` threads with the GIL released: the
// arrays were checked before, and each thread has a workspace of its own
template <typename Kernel>
void each_state(const Workspace& w, npy_intp K, nb::handle status, int threads, Kernel kernel) {
    int64_t* st = status_out(status, K);
    nb::gil_scoped_release release;
    run_batch(w.model, K, threads, [&](Data& d, int64_t s) { st[s] = kernel(d, s); });
}

npy_intp states_in(nb::handle Q, int nq) {
    PyObject* o = Q.ptr();
    if (!PyArray_Check(o) || PyArray_NDIM(reinterpret_cast<PyArrayObject*>(o)) != 2)
        throw nb::value_error("Q: expected a (K, nq) float64 array");
    const npy_intp K = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 0);
    array_in(Q, {K, nq}, "Q");
    return K;
}

// a C-contiguous int64 array of the given shape, read only
const int64_t* ints_in(nb::handle h, std::initializer_list<npy_intp> shape, const char* what) {
    PyObject* o = h.ptr();
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    bool ok = PyArray_Check(o) && PyArray_TYPE(a) == NPY_INT64 && PyArray_ISNOTSWAPPED(a) && PyArray_ISALIGNED(a) &&
              PyArray_NDIM(a) == int(shape.size()) && PyArray_IS_C_CONTIGUOUS(a);
    int d = 0;
    for (npy_intp s : shape) ok = ok && PyArray_DIM(a, d++) == s;
    if (!ok) throw nb::value_error((std::string(what) + ": expected a C-contiguous int64 array of its shape").c_str());
    return static_cast<const int64_t*>(PyArray_DATA(a));
}

npy_intp length_of(nb::handle h, const char* what) {
    PyObject* o = h.ptr();
    if (!PyArray_Check(o) || PyArray_NDIM(reinterpret_cast<PyArrayObject*>(o)) < 1)
        throw nb::value_error((std::string(what) + ": expected an array").c_str());
    return PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 0);
}

// the packed closures (model/loops.py), checked against the tree: every index the kernels follow
Closures closures_in(const Model& model, nb::handle ci, nb::handle cg, nb::handle support, npy_intp& rows) {
    const npy_intp C = length_of(ci, "ci");
    Closures c{C, ints_in(ci, {C, 3}, "ci"), array_in(cg, {C, CLOSURE_GEOM_WIDTH}, "cg"),
               array_in(support, {model.N + 1, model.nv}, "support")};
    rows = 0;
    for (npy_intp k = 0; k < C; ++k) {
        const int64_t bP = c.ci[3 * k], bC = c.ci[3 * k + 1], r = c.ci[3 * k + 2];
        if (bP < 0 || bP > model.N || bC < 0 || bC > model.N || r < 0 || r > 3)
            throw nb::value_error("ci: closures must name bodies of the tree (N for the world) and 0 to 3 rows");
        rows += 3 + r;
    }
    return c;
}

// indices into q or v, each checked
const int64_t* indices_in(nb::handle h, npy_intp& n, int bound, const char* what) {
    n = length_of(h, what);
    const int64_t* p = ints_in(h, {n}, what);
    for (npy_intp k = 0; k < n; ++k)
        if (p[k] < 0 || p[k] >= bound) throw nb::value_error((std::string(what) + ": an index out of range").c_str());
    return p;
}

Model make_model(nb::handle ints, nb::handle cols, nb::handle geom, int nq, int body_frame) {
    Model m;
    m.N = int(PyArray_Check(ints.ptr()) ? PyArray_DIM(reinterpret_cast<PyArrayObject*>(ints.ptr()), 0) : -1);
    m.nv = int(PyArray_Check(cols.ptr()) ? PyArray_DIM(reinterpret_cast<PyArrayObject*>(cols.ptr()), 0) : -1);
    if (m.N < 0 || m.nv < 0) throw nb::type_error("ints, cols and geom must be NumPy arrays");
    m.nq = nq;
    m.ints = copy_table<int64_t>(ints, m.N, 4, NPY_INT64, "ints");
    m.cols = copy_table<int64_t>(cols, m.nv, 3, NPY_INT64, "cols");
    m.geom = copy_table<double>(geom, m.N, GEOM_WIDTH, NPY_DOUBLE, "geom");
    // indices the kernels follow without checks: the tree is made valid in Python, but a bad
    // table must never crash the interpreter
    for (int j = 0; j < m.nv; ++j) {
        const int b = m.col_body(j), prev = m.col_previous(j), u = m.col_unit(j);
        if (b < 0 || b >= m.N || prev >= j || prev < -1 || u < -1 || u > 5)
            throw nb::value_error("cols: not the velocity columns of this tree");
    }
    static const int joint_nq[] = {1, 1, 7, 4, 4, 7}, joint_nv[] = {1, 1, 6, 3, 3, 6};
    int64_t columns = 0;
    for (int i = 0; i < m.N; ++i) {
        const int p = m.parent(i);
        const int64_t jt = m.joint(i);
        const bool known = jt >= REVOLUTE && jt <= FLOATING;
        if (p >= i || p < -1 || !known || m.q_start(i) < 0 || m.v_start(i) < 0 ||
            int64_t(m.q_start(i)) + joint_nq[known ? jt : 0] > nq || int64_t(m.v_start(i)) + joint_nv[known ? jt : 0] > m.nv)
            throw nb::value_error("ints: not a tree of bodies numbered from the root with their joints' q and v");
        for (int k = 0; k < joint_nv[jt]; ++k)
            if (m.col_body(m.v_start(i) + k) != i) throw nb::value_error("cols: a joint's columns are not its body's");
        columns += joint_nv[jt];
        if (jt == FREE && i != 0) throw nb::value_error("ints: a free root joint on a body other than the first");
    }
    if (columns != m.nv) throw nb::value_error("cols: not one column per DoF of the joints");
    m.body_frame = body_frame_joints(m) && body_frame != 0;  // -1: wherever it applies
    m.col_end.resize(m.nv);
    for (int j = 0; j < m.nv; ++j) m.col_end[j] = subtree_end_column(m, m.col_body(j));
    m.body_end.resize(m.N);
    for (int b = 0; b < m.N; ++b) {
        int after = b + 1;
        while (after < m.N && m.parent(after) >= b) ++after;
        m.body_end[b] = after;
    }
    return m;
}

// θ of length zero (the model's own parameters: null) or 10 N finite doubles; false otherwise,
// and the caller rechecks θ in full for the message
bool parameters_in(nb::handle theta, const Model& model, const double*& out) {
    out = nullptr;
    PyObject* o = theta.ptr();
    if (PyArray_Check(o) && PyArray_SIZE(reinterpret_cast<PyArrayObject*>(o)) == 0) return true;
    const double* t = vector_in(theta, npy_intp(N_PARAMETERS) * model.N);
    if (!t) return false;
    for (int k = 0; k < N_PARAMETERS * model.N; ++k)
        if (!std::isfinite(t[k])) return false;
    out = t;
    return true;
}

constexpr double NO_GRAVITY[3] = {0.0, 0.0, 0.0};

void check_factorization(int factorization) {
    if (factorization != CHRISTOFFEL && factorization != FEATHERSTONE)
        throw nb::value_error("factorization: 0 (Christoffel) or 1 (Featherstone)");
}

// A derivatives kernel, (model, data, q, q̇, x, gravity, A, B, C) with three nv x nv outputs, bound
// as `name` for one state (into out (3, nv, nv)) and as `batch_name` for K states (out (K, 3, nv,
// nv)); x is q̈ or τ. Names and doc are literals: kept.
template <typename Kernel>
void def_derivatives(nb::module_& m, const char* name, const char* batch_name, const char* x, Kernel kernel,
                     const char* doc) {
    m.def(
        name,
        [=](Workspace& w, nb::handle q, nb::handle qd, nb::handle xs, nb::handle gravity, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            double* o = array_out(out, {3, n, n}, "out");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n), *xp = vector_in(xs, n);
            if (!qp || !qdp || !xp) return RECHECK;
            return kernel(w.model, w.data, qp, qdp, xp, grav, o, o + n * n, o + 2 * n * n);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg(x), nb::arg("gravity"), nb::arg("out"), doc);
    m.def(
        batch_name,
        [=](Workspace& w, nb::handle Q, nb::handle QD, nb::handle XS, nb::handle gravity, nb::handle out,
            nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *xs = array_in(XS, {K, n}, "X"), *grav = array_in(gravity, {3}, "gravity");
            double* o = array_out(out, {K, 3, n, n}, "out");
            const int64_t nn = int64_t(n) * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* D = o + 3 * nn * s;
                return kernel(w.model, d, q + s * nq, qd + s * n, xs + s * n, grav, D, D + nn, D + 2 * nn);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("X"), nb::arg("gravity"), nb::arg("out"),
        nb::arg("status"), nb::arg("threads"));
}

}  // namespace

NB_MODULE(compiled, m) {
    if (_import_array() < 0) throw nb::python_error();
    m.doc() = "The compiled kernels of coriolis (C++17): M, Ṁ, C, Γ, τ, g, q̈ and Slotine–Li of a rigid-body tree.";

    m.attr("OK") = OK;
    m.attr("RECHECK") = RECHECK;
    m.attr("SINGULAR") = SINGULAR;

    nb::class_<Workspace>(m, "Workspace", "A robot's model and one workspace for it (not shared between threads).")
        .def(
            "__init__",
            [](Workspace* self, nb::handle ints, nb::handle cols, nb::handle geom, int nq, int body_frame) {
                new (self) Workspace(make_model(ints, cols, geom, nq, body_frame));
            },
            nb::arg("ints"), nb::arg("cols"), nb::arg("geom"), nb::arg("nq"), nb::arg("body_frame") = -1,
            "body_frame: -1 wherever it applies (1-DoF joints under at most a free root), 0 never.")
        .def_prop_ro("N", [](const Workspace& w) { return w.model.N; })
        .def_prop_ro("nv", [](const Workspace& w) { return w.model.nv; })
        .def_prop_ro("nq", [](const Workspace& w) { return w.model.nq; })
        .def_prop_ro("body_frame", [](const Workspace& w) { return w.model.body_frame; })
        .def_prop_ro(
            "bytes", [](const Workspace& w) { return w.model.bytes() + w.data.bytes(); },
            "The bytes the model and the workspace hold (core/data.hpp's table).");
    m.def(
        "workspace_bytes",
        [](std::size_t nq, std::size_t N, std::size_t nv) {
            return Model::bytes_for(N, nv) + Data::doubles(nq, N, nv) * sizeof(double);
        },
        nb::arg("nq"), nb::arg("N"), nb::arg("nv"),
        "The bytes a Workspace of these sizes will hold, before it is made: Workspace.bytes, ahead.");

    // ---- one state: the status code of engine/core/joints.hpp, RECHECK for an argument to convert ----
    m.def(
        "mass_matrix",
        [](Workspace& w, nb::handle q, nb::handle M) -> int64_t {
            const int n = w.model.nv;
            double* Mo = array_out(M, {n, n}, "M");
            const double* qp = vector_in(q, w.model.nq);
            if (!qp) return RECHECK;
            return compute_mass_matrix(w.model, w.data, qp, Mo);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("M"), "M(q) into M (related entries only).");

    m.def(
        "inverse_dynamics",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle qdd, nb::handle gravity, nb::handle tau) -> int64_t {
            const int n = w.model.nv;
            double* out = array_out(tau, {n}, "tau");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n), *qddp = vector_in(qdd, n);
            if (!qp || !qdp || !qddp) return RECHECK;
            return compute_inverse_dynamics(w.model, w.data, qp, qdp, qddp, grav, out);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("qdd"), nb::arg("gravity"), nb::arg("tau"),
        "τ(q, q̇, q̈) into tau.");

    m.def(
        "gravity_vector",
        [](Workspace& w, nb::handle q, nb::handle gravity, nb::handle g) -> int64_t {
            double* out = array_out(g, {w.model.nv}, "g");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double* qp = vector_in(q, w.model.nq);
            if (!qp) return RECHECK;
            return compute_gravity_vector(w.model, w.data, qp, grav, out);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("gravity"), nb::arg("g"), "g(q) into g.");

    m.def(
        "forward_dynamics",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle tau, nb::handle gravity, nb::handle qdd) -> int64_t {
            const int n = w.model.nv;
            double* out = array_out(qdd, {n}, "qdd");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n), *taup = vector_in(tau, n);
            if (!qp || !qdp || !taup) return RECHECK;
            return compute_forward_dynamics(w.model, w.data, qp, qdp, taup, grav, out, w.data.M.data());
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("tau"), nb::arg("gravity"), nb::arg("qdd"),
        "q̈ into qdd (M(q), where it is formed, stays in the workspace).");

    m.def(
        "coriolis_matrix",
        [](Workspace& w, nb::handle q, nb::handle qd, int factorization, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            check_factorization(factorization);
            double* M = array_out(out, {3, n, n}, "out");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n);
            if (!qp || !qdp) return RECHECK;
            return coriolis_matrix(w.model, w.data, qp, qdp, factorization, M, M + n * n, M + 2 * n * n);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("factorization"), nb::arg("out"),
        "M, Ṁ and C (Algorithm 1) into out (3, nv, nv).");

    def_derivatives(m, "inverse_dynamics_derivatives", "inverse_dynamics_derivatives_batch", "qdd", rnea_derivatives,
                    "∂τ/∂q, ∂τ/∂q̇ and M (= ∂τ/∂q̈) into out (3, nv, nv).");
    def_derivatives(m, "forward_dynamics_derivatives", "forward_dynamics_derivatives_batch", "tau",
                    forward_dynamics_derivatives,
                    "∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ (= ∂q̈/∂τ) into out (3, nv, nv).");

    // Slotine–Li's derivatives, and those of C(q, q̇) v (Slotine–Li at q̈_r = 0 without gravity)
    m.def(
        "slotine_li_derivatives",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle qd_r, nb::handle qdd_r, nb::handle gravity,
           int factorization, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            check_factorization(factorization);
            double* o = array_out(out, {4, n, n}, "out");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *a = vector_in(qd, n), *b = vector_in(qd_r, n),
                         *c = vector_in(qdd_r, n);
            if (!qp || !a || !b || !c) return RECHECK;
            const int64_t nn = int64_t(n) * n;
            return slotine_li_derivatives(w.model, w.data, qp, a, b, c, grav, factorization, o, o + nn, o + 2 * nn,
                                          o + 3 * nn);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("qd_r"), nb::arg("qdd_r"), nb::arg("gravity"),
        nb::arg("factorization"), nb::arg("out"), "∂τ/∂q, ∂τ/∂q̇, C (= ∂τ/∂q̇_r) and M (= ∂τ/∂q̈_r) into out (4, nv, nv).");
    m.def(
        "slotine_li_derivatives_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle QDR, nb::handle QDDR, nb::handle gravity,
           int factorization, nb::handle out, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            check_factorization(factorization);
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *qdr = array_in(QDR, {K, n}, "QDR"), *qddr = array_in(QDDR, {K, n}, "QDDR"),
                         *grav = array_in(gravity, {3}, "gravity");
            double* o = array_out(out, {K, 4, n, n}, "out");
            const int64_t nn = int64_t(n) * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* D = o + 4 * nn * s;
                return slotine_li_derivatives(w.model, d, q + s * nq, qd + s * n, qdr + s * n, qddr + s * n, grav,
                                              factorization, D, D + nn, D + 2 * nn, D + 3 * nn);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("QDR"), nb::arg("QDDR"), nb::arg("gravity"),
        nb::arg("factorization"), nb::arg("out"), nb::arg("status"), nb::arg("threads"));
    m.def(
        "coriolis_product_derivatives",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle v, int factorization, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            check_factorization(factorization);
            double* o = array_out(out, {2, n, n}, "out");
            const double *qp = vector_in(q, w.model.nq), *a = vector_in(qd, n), *b = vector_in(v, n);
            if (!qp || !a || !b) return RECHECK;
            return slotine_li_derivatives(w.model, w.data, qp, a, b, w.data.zero.data(), NO_GRAVITY, factorization, o,
                                          o + int64_t(n) * n, nullptr, nullptr);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("v"), nb::arg("factorization"), nb::arg("out"),
        "∂(C v)/∂q and ∂(C v)/∂q̇ into out (2, nv, nv).");
    m.def(
        "coriolis_product_derivatives_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle V, int factorization, nb::handle out,
           nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            check_factorization(factorization);
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"), *v = array_in(V, {K, n}, "V");
            double* o = array_out(out, {K, 2, n, n}, "out");
            const int64_t nn = int64_t(n) * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* D = o + 2 * nn * s;
                return slotine_li_derivatives(w.model, d, q + s * nq, qd + s * n, v + s * n, d.zero.data(), NO_GRAVITY,
                                              factorization, D, D + nn, nullptr, nullptr);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("V"), nb::arg("factorization"), nb::arg("out"),
        nb::arg("status"), nb::arg("threads"));

    m.def(
        "gravity_derivatives",
        [](Workspace& w, nb::handle q, nb::handle gravity, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            double* o = array_out(out, {n, n}, "out");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double* qp = vector_in(q, w.model.nq);
            if (!qp) return RECHECK;
            return gravity_derivatives(w.model, w.data, qp, grav, o);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("gravity"), nb::arg("out"), "∂g/∂q into out (nv, nv).");
    m.def(
        "gravity_derivatives_batch",
        [](Workspace& w, nb::handle Q, nb::handle gravity, nb::handle out, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *grav = array_in(gravity, {3}, "gravity");
            double* o = array_out(out, {K, n, n}, "out");
            const int64_t nn = int64_t(n) * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return gravity_derivatives(w.model, d, q + s * nq, grav, o + nn * s);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("gravity"), nb::arg("out"), nb::arg("status"), nb::arg("threads"));
    m.def(
        "coriolis_transpose_derivatives",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            double* o = array_out(out, {2, n, n}, "out");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n);
            if (!qp || !qdp) return RECHECK;
            return coriolis_transpose_derivatives(w.model, w.data, qp, qdp, o, o + int64_t(n) * n);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("out"),
        "∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇ into out (2, nv, nv).");
    m.def(
        "coriolis_transpose_derivatives_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle out, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD");
            double* o = array_out(out, {K, 2, n, n}, "out");
            const int64_t nn = int64_t(n) * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* D = o + 2 * nn * s;
                return coriolis_transpose_derivatives(w.model, d, q + s * nq, qd + s * n, D, D + nn);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("out"), nb::arg("status"), nb::arg("threads"));

    m.def(
        "inverse_dynamics_second_derivatives",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle qdd, nb::handle gravity, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            double* o = array_out(out, {4, n, n, n}, "out");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *a = vector_in(qd, n), *b = vector_in(qdd, n);
            if (!qp || !a || !b) return RECHECK;
            const int64_t n3 = int64_t(n) * n * n;
            return rnea_second_derivatives(w.model, w.data, qp, a, b, grav, o, o + n3, o + 2 * n3, o + 3 * n3);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("qdd"), nb::arg("gravity"), nb::arg("out"),
        "∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇ and ∂²τ/∂q∂q̈ into out (4, nv, nv, nv).");
    m.def(
        "inverse_dynamics_second_derivatives_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle QDD, nb::handle gravity, nb::handle out,
           nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *qdd = array_in(QDD, {K, n}, "QDD"), *grav = array_in(gravity, {3}, "gravity");
            double* o = array_out(out, {K, 4, n, n, n}, "out");
            const int64_t n3 = int64_t(n) * n * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* D = o + 4 * n3 * s;
                return rnea_second_derivatives(w.model, d, q + s * nq, qd + s * n, qdd + s * n, grav, D, D + n3,
                                               D + 2 * n3, D + 3 * n3);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("QDD"), nb::arg("gravity"), nb::arg("out"),
        nb::arg("status"), nb::arg("threads"));

    m.def(
        "christoffel",
        [](Workspace& w, nb::handle q, nb::handle Gamma) -> int64_t {
            const int n = w.model.nv;
            double* G = array_out(Gamma, {n, n, n}, "Gamma");
            const double* qp = vector_in(q, w.model.nq);
            if (!qp) return RECHECK;
            return christoffel(w.model, w.data, qp, G);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("Gamma"), "Γ (Algorithm 2) into Gamma.");

    m.def(
        "slotine_li",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle qd_r, nb::handle qdd_r, nb::handle theta,
           nb::handle gravity, int factorization, nb::handle tau) -> int64_t {
            const int n = w.model.nv;
            check_factorization(factorization);
            double* out = array_out(tau, {n}, "tau");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *a = vector_in(qd, n), *b = vector_in(qd_r, n),
                         *c = vector_in(qdd_r, n), *t;
            if (!qp || !a || !b || !c || !parameters_in(theta, w.model, t)) return RECHECK;
            return compute_slotine_li(w.model, w.data, qp, a, b, c, grav, t, factorization, out);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("qd_r"), nb::arg("qdd_r"), nb::arg("theta"),
        nb::arg("gravity"), nb::arg("factorization"), nb::arg("tau"),
        "The Slotine–Li torque into tau; theta of length zero: the model's own parameters.");

    m.def(
        "regressor",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle qd_r, nb::handle qdd_r, nb::handle gravity,
           int factorization, nb::handle out) -> int64_t {
            const int n = w.model.nv, width = N_PARAMETERS * w.model.N;
            check_factorization(factorization);
            double* Y = array_out(out, {n + 1, width}, "out");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *a = vector_in(qd, n), *b = vector_in(qd_r, n),
                         *c = vector_in(qdd_r, n);
            if (!qp || !a || !b || !c) return RECHECK;
            return regressor(w.model, w.data, qp, a, b, c, grav, factorization, Y, Y + n * width);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("qd_r"), nb::arg("qdd_r"), nb::arg("gravity"),
        nb::arg("factorization"), nb::arg("out"), "Y (related entries only) and Yᵀs into out (nv + 1, 10 N).");

    m.def(
        "adaptation_gradient",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle qd_r, nb::handle qdd_r, nb::handle gravity,
           int factorization, nb::handle Yts) -> int64_t {
            const int n = w.model.nv;
            check_factorization(factorization);
            double* out = array_out(Yts, {N_PARAMETERS * w.model.N}, "Yts");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *a = vector_in(qd, n), *b = vector_in(qd_r, n),
                         *c = vector_in(qdd_r, n);
            if (!qp || !a || !b || !c) return RECHECK;
            return compute_adaptation_gradient(w.model, w.data, qp, a, b, c, grav, factorization, out);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("qd_r"), nb::arg("qdd_r"), nb::arg("gravity"),
        nb::arg("factorization"), nb::arg("Yts"), "Yᵀs without Y.");

    // ---- batches: K states on `threads` threads, the GIL released; outputs zeroed by the caller ----
    m.def(
        "mass_matrix_batch",
        [](Workspace& w, nb::handle Q, nb::handle M, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double* q = array_in(Q, {K, nq}, "Q");
            double* out = array_out(M, {K, n, n}, "M");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return compute_mass_matrix(w.model, d, q + s * nq, out + s * n * n);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("M"), nb::arg("status"), nb::arg("threads"));

    m.def(
        "inverse_dynamics_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle QDD, nb::handle gravity, nb::handle tau,
           nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *qdd = array_in(QDD, {K, n}, "QDD"), *grav = array_in(gravity, {3}, "gravity");
            double* out = array_out(tau, {K, n}, "tau");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return compute_inverse_dynamics(w.model, d, q + s * nq, qd + s * n, qdd + s * n, grav, out + s * n);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("QDD"), nb::arg("gravity"), nb::arg("tau"),
        nb::arg("status"), nb::arg("threads"));

    m.def(
        "gravity_vector_batch",
        [](Workspace& w, nb::handle Q, nb::handle gravity, nb::handle g, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *grav = array_in(gravity, {3}, "gravity");
            double* out = array_out(g, {K, n}, "g");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return compute_gravity_vector(w.model, d, q + s * nq, grav, out + s * n);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("gravity"), nb::arg("g"), nb::arg("status"), nb::arg("threads"));

    m.def(
        "forward_dynamics_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle TAU, nb::handle gravity, nb::handle qdd,
           nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *tau = array_in(TAU, {K, n}, "TAU"), *grav = array_in(gravity, {3}, "gravity");
            double* out = array_out(qdd, {K, n}, "qdd");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return compute_forward_dynamics(w.model, d, q + s * nq, qd + s * n, tau + s * n, grav, out + s * n,
                                                d.M.data());
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("TAU"), nb::arg("gravity"), nb::arg("qdd"),
        nb::arg("status"), nb::arg("threads"));

    m.def(
        "regressor_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle QD_R, nb::handle QDD_R, nb::handle gravity,
           int factorization, nb::handle Y, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq, width = N_PARAMETERS * w.model.N;
            check_factorization(factorization);
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *qd_r = array_in(QD_R, {K, n}, "QD_R"), *qdd_r = array_in(QDD_R, {K, n}, "QDD_R"),
                         *grav = array_in(gravity, {3}, "gravity");
            double* out = array_out(Y, {K, n, width}, "Y");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                std::vector<double> Yts(width);
                return regressor(w.model, d, q + s * nq, qd + s * n, qd_r + s * n, qdd_r + s * n, grav, factorization,
                                 out + s * n * width, Yts.data());
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("QD_R"), nb::arg("QDD_R"), nb::arg("gravity"),
        nb::arg("factorization"), nb::arg("Y"), nb::arg("status"), nb::arg("threads"));

    m.def(
        "coriolis_matrix_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, int factorization, nb::handle out, nb::handle status,
           int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            if (factorization != CHRISTOFFEL && factorization != FEATHERSTONE)
                throw nb::value_error("factorization: 0 (Christoffel) or 1 (Featherstone)");
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD");
            double* o = array_out(out, {K, 3, n, n}, "out");
            const int64_t nn = int64_t(n) * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* M = o + 3 * nn * s;
                return coriolis_matrix(w.model, d, q + s * nq, qd + s * n, factorization, M, M + nn, M + 2 * nn);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("factorization"), nb::arg("out"),
        nb::arg("status"), nb::arg("threads"), "M, Ṁ, C of K states into out (K, 3, nv, nv).");

    m.def(
        "christoffel_batch",
        [](Workspace& w, nb::handle Q, nb::handle Gamma, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double* q = array_in(Q, {K, nq}, "Q");
            double* G = array_out(Gamma, {K, n, n, n}, "Gamma");
            const int64_t n3 = int64_t(n) * n * n;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return christoffel(w.model, d, q + s * nq, G + n3 * s);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("Gamma"), nb::arg("status"), nb::arg("threads"));

    // ---- the momentum terms (engine/core/momentum.hpp) ----
    m.def(
        "momentum",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle out) -> int64_t {
            const int n = w.model.nv;
            double* o = array_out(out, {2, n}, "out");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n);
            if (!qp || !qdp) return RECHECK;
            return momentum(w.model, w.data, qp, qdp, o, o + n);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("out"), "p = M q̇ and Cᵀq̇ into out (2, nv).");

    m.def(
        "momentum_regressors",
        [](Workspace& w, nb::handle q, nb::handle qd, nb::handle gravity, nb::handle out) -> int64_t {
            const int n = w.model.nv, width = N_PARAMETERS * w.model.N;
            const int64_t block = int64_t(n) * width;
            double* o = array_out(out, {3 * n + 1, width}, "out");
            const double* grav = array_in(gravity, {3}, "gravity");
            const double *qp = vector_in(q, w.model.nq), *qdp = vector_in(qd, n);
            if (!qp || !qdp) return RECHECK;
            return momentum_regressors(w.model, w.data, qp, qdp, grav, o, o + block, o + 2 * block, o + 3 * block);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("qd"), nb::arg("gravity"), nb::arg("out"),
        "Y_p, Y_c, Y_g (related entries only) and Y_T into out (3 nv + 1, 10 N).");

    m.def(
        "momentum_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle out, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD");
            double* o = array_out(out, {K, 2, n}, "out");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return momentum(w.model, d, q + s * nq, qd + s * n, o + 2 * n * s, o + 2 * n * s + n);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("out"), nb::arg("status"), nb::arg("threads"),
        "p and Cᵀq̇ of K states into out (K, 2, nv).");

    m.def(
        "momentum_regressor_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle gravity, nb::handle out, nb::handle status,
           int threads) {
            const int n = w.model.nv, nq = w.model.nq, width = N_PARAMETERS * w.model.N;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *grav = array_in(gravity, {3}, "gravity");
            double* o = array_out(out, {K, 3 * n + 1, width}, "out");
            const int64_t block = int64_t(n) * width;
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                double* os = o + (3 * block + width) * s;
                return momentum_regressors(w.model, d, q + s * nq, qd + s * n, grav, os, os + block, os + 2 * block,
                                           os + 3 * block);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("gravity"), nb::arg("out"), nb::arg("status"),
        nb::arg("threads"), "Y_p, Y_c, Y_g and Y_T of K states into out (K, 3 nv + 1, 10 N), zeroed by the caller.");

    m.def(
        "trajectory_batch",
        [](Workspace& w, nb::handle Q, nb::handle QD, nb::handle QDD, bool use_qdd, nb::handle gravity,
           nb::handle out, nb::handle status, int threads) {
            const int n = w.model.nv, nq = w.model.nq, width = TRAJECTORY_QUANTITIES * n + 2;
            const npy_intp K = states_in(Q, nq);
            const double *q = array_in(Q, {K, nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *qdd = array_in(QDD, {K, n}, "QDD"), *grav = array_in(gravity, {3}, "gravity");
            double* o = array_out(out, {K, width}, "out");
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                return trajectory(w.model, d, q + s * nq, qd + s * n, qdd + s * n, use_qdd, grav, o + width * s);
            });
        },
        nb::arg("workspace"), nb::arg("Q"), nb::arg("QD"), nb::arg("QDD"), nb::arg("use_qdd"), nb::arg("gravity"),
        nb::arg("out"), nb::arg("status"), nb::arg("threads"),
        "g, C q̇, Cᵀq̇, p, τ, T and V of K samples into out (K, 5 nv + 2).");

    // ---- along recordings: the observers' recursion and identification's filter ----
    m.def(
        "momentum_energy_recursion",
        [](nb::handle t, nb::handle P, nb::handle CT, nb::handle G, nb::handle TAU, nb::handle QD, nb::handle kinetic,
           nb::handle K, double kE, nb::handle p0, nb::handle integral, nb::handle r, nb::handle u, nb::handle scalars,
           nb::handle R, nb::handle SIGMA) {
            PyObject* o = P.ptr();
            if (!PyArray_Check(o) || PyArray_NDIM(reinterpret_cast<PyArrayObject*>(o)) != 2)
                throw nb::value_error("P: expected a (k, nv) float64 array");
            const npy_intp k = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 0),
                           n = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 1);
            momentum_energy_recursion(
                k, int(n), array_in(t, {k}, "t"), array_in(P, {k, n}, "P"), array_in(CT, {k, n}, "CT"),
                array_in(G, {k, n}, "G"), array_in(TAU, {k, n}, "TAU"), array_in(QD, {k, n}, "QD"),
                array_in(kinetic, {k}, "kinetic"), array_in(K, {n}, "K"), kE, array_out(p0, {n}, "p0"),
                array_out(integral, {n}, "integral"), array_out(r, {n}, "r"), array_out(u, {n}, "u"),
                array_out(scalars, {OBSERVER_SCALARS}, "scalars"), array_out(R, {k, n}, "R"), array_out(SIGMA, {k}, "SIGMA"));
        },
        nb::arg("t"), nb::arg("P"), nb::arg("CT"), nb::arg("G"), nb::arg("TAU"), nb::arg("QD"), nb::arg("kinetic"),
        nb::arg("K"), nb::arg("kE"), nb::arg("p0"), nb::arg("integral"), nb::arg("r"), nb::arg("u"), nb::arg("scalars"),
        nb::arg("R"), nb::arg("SIGMA"), "The momentum and energy observers' residuals for one chunk (state in place).");
    m.attr("OBSERVER_SCALARS") = OBSERVER_SCALARS;

    m.def(
        "low_pass",
        [](nb::handle t, nb::handle start, nb::handle end, double cutoff, nb::handle state, nb::handle clock,
           nb::handle out) {
            PyObject* o = end.ptr();
            if (!PyArray_Check(o) || PyArray_NDIM(reinterpret_cast<PyArrayObject*>(o)) != 2)
                throw nb::value_error("end: expected a (k, m) float64 array");
            const npy_intp k = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 0),
                           m = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 1);
            low_pass(k, m, array_in(t, {k}, "t"), array_in(start, {k, m}, "start"), array_in(end, {k, m}, "end"),
                     cutoff, array_out(state, {m}, "state"), array_out(clock, {2}, "clock"),
                     array_out(out, {k, m}, "out"));
        },
        nb::arg("t"), nb::arg("start"), nb::arg("end"), nb::arg("cutoff"), nb::arg("state"), nb::arg("clock"),
        nb::arg("out"), "Identification's low-pass filter over one chunk (state and clock in place).");

    m.def(
        "local_polynomial",
        [](nb::handle T, nb::handle X, int64_t window, int deriv, int64_t lo, int64_t hi, double scale, nb::handle out) {
            PyObject* o = X.ptr();
            if (!PyArray_Check(o) || PyArray_NDIM(reinterpret_cast<PyArrayObject*>(o)) != 2)
                throw nb::value_error("X: expected a (n, cols) float64 array");
            const npy_intp n = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 0),
                           cols = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 1);
            if (window < FIT_COEFFICIENTS || window > n || deriv < 0 || deriv >= FIT_COEFFICIENTS || lo < 0 || hi > n ||
                lo > hi || !(scale > 0.0))
                throw nb::value_error("local_polynomial: a window of 4 to n rows, 0 <= deriv < 4, 0 <= lo <= hi <= n");
            const double *t = array_in(T, {n}, "T"), *x = array_in(X, {n, cols}, "X");
            double* y = array_out(out, {hi - lo, cols}, "out");
            bool ok;
            {
                nb::gil_scoped_release release;
                ok = local_polynomial(n, cols, t, x, window, deriv, lo, hi, scale, y);
            }
            return ok;
        },
        nb::arg("T"), nb::arg("X"), nb::arg("window"), nb::arg("deriv"), nb::arg("lo"), nb::arg("hi"), nb::arg("scale"),
        nb::arg("out"), "The deriv-th derivative of X's columns at rows lo..hi by cubics fitted on the stamps T.");

    // ---- bench: a kernel in a loop, as C++ is timed ----
    m.def(
        "kernel_loop",
        [](Workspace& w, const std::string& what, int64_t R, nb::handle Q, nb::handle QD, nb::handle QDD) {
            const int n = w.model.nv;
            const npy_intp K = states_in(Q, w.model.nq);
            const double *q = array_in(Q, {K, w.model.nq}, "Q"), *qd = array_in(QD, {K, n}, "QD"),
                         *qdd = array_in(QDD, {K, n}, "QDD");
            if (K < 1 || R < 0) throw nb::value_error("kernel_loop: at least one state and R >= 0");
            // the GIL stays held: the workspace may be one that calls from other threads share
            if (!kernel_loop(w.model, w.data, what, R, K, q, qd, qdd)) throw nb::value_error(("kernel_loop: unknown kernel '" + what + "'").c_str());
        },
        nb::arg("workspace"), nb::arg("what"), nb::arg("R"), nb::arg("Q"), nb::arg("QD"), nb::arg("QDD"),
        "Evaluate a kernel (C, Gamma, M, tau, g, fd, slotine) R times over the states, for timing.");

    // ---- closed loops (engine/core/closure.hpp) ----
    m.def(
        "loop_constraints",
        [](Workspace& w, nb::handle q, nb::handle ci, nb::handle cg, nb::handle support, nb::handle r,
           nb::handle K) -> int64_t {
            npy_intp rows;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            double *ro = array_out(r, {rows}, "r"), *Ko = array_out(K, {rows, w.model.nv}, "K");
            const double* qp = vector_in(q, w.model.nq);
            if (!qp) return RECHECK;
            return loop_constraints(w.model, w.data, qp, c, ro, Ko);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("ci"), nb::arg("cg"), nb::arg("support"), nb::arg("r"), nb::arg("K"),
        "φ(q) into r and ∂φ/∂q into K.");

    m.def(
        "loop_constraint_rate",
        [](Workspace& w, nb::handle q, nb::handle u, nb::handle ci, nb::handle cg, nb::handle support,
           nb::handle Kdot) -> int64_t {
            npy_intp rows;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            double* Ko = array_out(Kdot, {rows, w.model.nv}, "Kdot");
            const double *qp = vector_in(q, w.model.nq), *up = vector_in(u, w.model.nv);
            if (!qp || !up) return RECHECK;
            return loop_constraint_rate(w.model, w.data, qp, up, c, Ko);
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("u"), nb::arg("ci"), nb::arg("cg"), nb::arg("support"),
        nb::arg("Kdot"), "K̇ along the joint velocity u into Kdot.");

    m.def(
        "loop_newton",
        [](Workspace& w, nb::handle ci, nb::handle cg, nb::handle support, nb::handle q, nb::handle dep_q,
           nb::handle dep_v, nb::handle r, nb::handle K, double goal, int max_steps) -> int64_t {
            npy_intp rows, nd, nd_v;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            const int64_t *dq = indices_in(dep_q, nd, w.model.nq, "dep_q"), *dv = indices_in(dep_v, nd_v, w.model.nv, "dep_v");
            if (nd != nd_v) throw nb::value_error("dep_q and dep_v: one entry per dependent joint");
            double *qo = array_out(q, {w.model.nq}, "q"), *ro = array_out(r, {rows}, "r"),
                   *Ko = array_out(K, {rows, w.model.nv}, "K");
            return loop_newton(w.model, w.data, c, rows, qo, dq, dv, nd, ro, Ko, goal, max_steps);
        },
        nb::arg("workspace"), nb::arg("ci"), nb::arg("cg"), nb::arg("support"), nb::arg("q"), nb::arg("dep_q"),
        nb::arg("dep_v"), nb::arg("r"), nb::arg("K"), nb::arg("goal"), nb::arg("max_steps"),
        "Newton's method on the dependent joints, q in place.");

    m.def(
        "loop_continuation",
        [](Workspace& w, nb::handle ci, nb::handle cg, nb::handle support, nb::handle q, nb::handle dep_q,
           nb::handle dep_v, nb::handle ind_q, nb::handle ind_v, nb::handle x0, nb::handle target, double tol,
           double max_step, nb::handle r, nb::handle K) -> int {
            npy_intp rows, nd, nd_v, ni, ni_v;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            const int64_t *dq = indices_in(dep_q, nd, w.model.nq, "dep_q"), *dv = indices_in(dep_v, nd_v, w.model.nv, "dep_v"),
                          *iq = indices_in(ind_q, ni, w.model.nq, "ind_q"), *iv = indices_in(ind_v, ni_v, w.model.nv, "ind_v");
            if (nd != nd_v || ni != ni_v) throw nb::value_error("the q and v indices: one entry per joint");
            double *qo = array_out(q, {w.model.nq}, "q"), *ro = array_out(r, {rows}, "r"),
                   *Ko = array_out(K, {rows, w.model.nv}, "K");
            const double *x = array_in(x0, {ni}, "x0"), *t = array_in(target, {ni}, "target");
            // the GIL stays held: a loop solver's workspace serves every thread that asks it
            return loop_continuation(w.model, w.data, c, rows, qo, dq, dv, nd, iq, iv, ni, x, t, tol, max_step, ro, Ko);
        },
        nb::arg("workspace"), nb::arg("ci"), nb::arg("cg"), nb::arg("support"), nb::arg("q"), nb::arg("dep_q"),
        nb::arg("dep_v"), nb::arg("ind_q"), nb::arg("ind_v"), nb::arg("x0"), nb::arg("target"), nb::arg("tol"),
        nb::arg("max_step"), nb::arg("r"), nb::arg("K"), "Continuation from the assembly to the target; 0 when closed.");

    // ---- base velocity representations (engine/core/base_velocity.hpp) ----
    m.def(
        "base_transform",
        [](nb::handle E, nb::handle t, nb::handle q, nb::handle nu, int representation, nb::handle X, nb::handle Xdot) {
            if (representation < BODY_VELOCITY || representation > INERTIAL_VELOCITY)
                throw nb::value_error("representation: 0 body, 1 mixed, 2 inertial");
            const npy_intp nq = length_of(q, "q"), nnu = length_of(nu, "nu");
            if (nq < 7 || (nnu != 0 && nnu < 6)) throw nb::value_error("q: a free joint's 7 coordinates first; nu: 0 or 6+");
            base_transform(array_in(E, {3, 3}, "E"), array_in(t, {3}, "t"), array_in(q, {nq}, "q"),
                           nnu ? array_in(nu, {nnu}, "nu") : nullptr, representation, array_out(X, {6, 6}, "X"),
                           array_out(Xdot, {6, 6}, "Xdot"));
        },
        nb::arg("E"), nb::arg("t"), nb::arg("q"), nb::arg("nu"), nb::arg("representation"), nb::arg("X"), nb::arg("Xdot"));

    m.def(
        "base_coriolis",
        [](nb::handle X, nb::handle Xdot, nb::handle M, nb::handle Mdot, nb::handle C, nb::handle Mbar,
           nb::handle Mdotbar, nb::handle Cbar) {
            const npy_intp n = length_of(M, "M");
            if (n < 6) throw nb::value_error("M: a floating base's six coordinates first");
            base_coriolis(array_in(X, {6, 6}, "X"), array_in(Xdot, {6, 6}, "Xdot"), array_in(M, {n, n}, "M"),
                          array_in(Mdot, {n, n}, "Mdot"), array_in(C, {n, n}, "C"), int(n), array_out(Mbar, {n, n}, "Mbar"),
                          array_out(Mdotbar, {n, n}, "Mdotbar"), array_out(Cbar, {n, n}, "Cbar"));
        },
        nb::arg("X"), nb::arg("Xdot"), nb::arg("M"), nb::arg("Mdot"), nb::arg("C"), nb::arg("Mbar"), nb::arg("Mdotbar"),
        nb::arg("Cbar"));

    m.def(
        "base_christoffel",
        [](nb::handle X, nb::handle Xdot_basis, nb::handle M, nb::handle Gamma, nb::handle out) {
            const npy_intp n = length_of(M, "M");
            if (n < 6) throw nb::value_error("M: a floating base's six coordinates first");
            base_christoffel(array_in(X, {6, 6}, "X"), array_in(Xdot_basis, {6, 6, 6}, "Xdot_basis"),
                             array_in(M, {n, n}, "M"), array_in(Gamma, {n, n, n}, "Gamma"), int(n),
                             array_out(out, {n, n, n}, "out"));
        },
        nb::arg("X"), nb::arg("Xdot_basis"), nb::arg("M"), nb::arg("Gamma"), nb::arg("out"));

    m.def(
        "base_reference",
        [](nb::handle X, nb::handle Xdot, nb::handle qd, nb::handle qd_r, nb::handle qdd_r, nb::handle out) {
            const npy_intp n = length_of(qd, "qd");
            if (n < 6) throw nb::value_error("qd: a floating base's six coordinates first");
            base_reference(array_in(X, {6, 6}, "X"), array_in(Xdot, {6, 6}, "Xdot"), array_in(qd, {n}, "qd"),
                           array_in(qd_r, {n}, "qd_r"), array_in(qdd_r, {n}, "qdd_r"), int(n), array_out(out, {3, n}, "out"));
        },
        nb::arg("X"), nb::arg("Xdot"), nb::arg("qd"), nb::arg("qd_r"), nb::arg("qdd_r"), nb::arg("out"));

    m.def(
        "base_mass_matrix",
        [](nb::handle X, nb::handle M, nb::handle Mbar) {
            const npy_intp n = length_of(M, "M");
            if (n < 6) throw nb::value_error("M: a floating base's six coordinates first");
            base_mass_matrix(array_in(X, {6, 6}, "X"), array_in(M, {n, n}, "M"), int(n), array_out(Mbar, {n, n}, "Mbar"));
        },
        nb::arg("X"), nb::arg("M"), nb::arg("Mbar"));

    // ---- placements: what loop closures and tests read ----
    m.def(
        "placements",
        [](Workspace& w, nb::handle q, nb::handle R, nb::handle p, nb::handle S) -> int64_t {
            const int N = w.model.N, n = w.model.nv;
            double *Ro = array_out(R, {N, 3, 3}, "R"), *po = array_out(p, {N, 3}, "p"), *So = array_out(S, {n, 6}, "S");
            const double* qp = vector_in(q, w.model.nq);
            if (!qp) return RECHECK;
            const int64_t status = placements(w.model, w.data, qp);
            if (failed(status)) return status;
            for (int i = 0; i < N; ++i)
                for (int r = 0; r < 3; ++r) {
                    po[3 * i + r] = w.data.X[36 * i + 18 + r];
                    for (int c = 0; c < 3; ++c) Ro[9 * i + 3 * r + c] = w.data.X[36 * i + 6 * r + c];
                }
            for (int k = 0; k < 6 * n; ++k) So[k] = w.data.S[k];
            return status;
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("R"), nb::arg("p"), nb::arg("S"),
        "Body placements (R_i, p_i) and motion subspaces S in the computation frame.");

    // ---- spatial algebra, for the tests of its identities ----
    m.def(
        "body_factorization",
        [](nb::handle v, nb::handle I, int kind, nb::handle out) {
            check_factorization(kind);
            body_factorization(array_in(v, {6}, "v"), array_in(I, {6, 6}, "I"), kind, array_out(out, {6, 6}, "out"));
        },
        nb::arg("v"), nb::arg("I"), nb::arg("kind"), nb::arg("out"), "out = B(v, I), eq. (10) (kind 0) or eq. (9) (kind 1).");
}
