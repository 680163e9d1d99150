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

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "core/base_velocity.hpp"
#include "core/batch.hpp"
#include "core/closure.hpp"
#include "core/engine.hpp"
#include "core/filters.hpp"
#include "core/local_fit.hpp"
#include "core/observer.hpp"
#include "core/timing.hpp"
#include "xla_handlers.hpp"

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
    BatchThreads run;
    {
        nb::gil_scoped_release release;
        run = run_batch(w.model, K, threads, [&](Data& d, int64_t s) { st[s] = kernel(d, s); });
    }
    static std::atomic<bool> said{false};  // once a process: the limit stays
    if (run.started < run.wanted && !said.exchange(true) &&
        PyErr_WarnFormat(PyExc_UserWarning, 1,
                         "the system started %d of the %d threads asked for (set_num_threads, CORIOLIS_THREADS): "
                         "batches run on fewer threads",
                         run.started, run.wanted) < 0)
        throw nb::python_error();
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

// the loops' joints as the solve's coordinates (model/loops.py), checked against the tree: a 1-DoF
// entry names one q and one v entry, a spherical joint three rows (kinds 1, 2, 3) on 4 q and 3 v entries
LoopCoordinates loop_coordinates_in(const Model& model, nb::handle table, nb::handle basis) {
    const npy_intp n = length_of(table, "table");
    LoopCoordinates lc{n, ints_in(table, {n, 3}, "table"), array_in(basis, {n, 9}, "basis")};
    for (npy_intp k = 0; k < n; ++k) {
        const int64_t kind = lc.table[3 * k], qi = lc.table[3 * k + 1], vi = lc.table[3 * k + 2];
        const int64_t first = k - (kind - 1);
        const bool whole = kind == 0 ? qi >= 0 && qi < model.nq && vi >= 0 && vi < model.nv
                                     : kind >= 1 && kind <= 3 && first >= 0 && first + 2 < n && qi >= 0 &&
                                           qi + 4 <= model.nq && vi >= 0 && vi + 3 <= model.nv;
        bool same = whole;
        for (int64_t i = 0; same && kind > 0 && i < 3; ++i)
            same = lc.table[3 * (first + i)] == i + 1 && lc.table[3 * (first + i) + 1] == qi &&
                   lc.table[3 * (first + i) + 2] == vi;
        if (!same) throw nb::value_error("table: not the loop coordinates of this tree");
    }
    return lc;
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

void check_factorization(int factorization) {
    if (factorization != CHRISTOFFEL && factorization != FEATHERSTONE)
        throw nb::value_error("factorization: 0 (Christoffel) or 1 (Featherstone)");
}

// ---- one template for the kernels: a one-line adapter bound for one state and for K states ----
//
// A kernel takes q, V vectors nv long (q̇, q̈, τ, q̇_r, ...) and, in this order, what TAKES names
// of θ, gravity and the factorization; it writes one output block whose shape per state `shape`
// gives. Bound for one state as (workspace, q, v..., options..., out) → status, RECHECK for an
// argument the Python layer converts and checks in full; for K states as (workspace, Q, V...,
// options..., out, status, threads), the GIL released (engine/algorithms.py calls both).

enum Takes : unsigned { STATES_ONLY = 0, THETA = 1, GRAVITY = 2, FACTORIZATION = 4 };

struct Options {
    const double* theta = nullptr;  // null: the model's own parameters
    const double* gravity = NO_GRAVITY;
    int factorization = CHRISTOFFEL;
};

// one state's output block: up to four dimensions, and how many outputs lie side by side along
// the first (1: the block is one output)
struct Shape {
    int rank;
    npy_intp dims[4];
    int parts = 1;
    int64_t size() const {
        int64_t s = 1;
        for (int k = 0; k < rank; ++k) s *= dims[k];
        return s;
    }
};

// the outputs of one state's block, each where it starts
using Outputs = std::array<double*, 4>;

Outputs split(double* block, const Shape& shape) {
    Outputs out{};
    const int64_t part = shape.size() / shape.parts;
    for (int k = 0; k < shape.parts; ++k) out[k] = block + k * part;
    return out;
}

// a kernel's adapter: the core's function called with the states, options and outputs it takes
#define ADAPT(call)                                                                                         \
    [](const Model& model, Data& d, const double* q, const auto& v, const Options& o, const Outputs& out) \
        -> int64_t {                                                                                        \
        (void)model, (void)q, (void)v, (void)o;                                                            \
        return call;                                                                                        \
    }

template <int V>
using Velocities = std::array<const double*, V>;

template <std::size_t>
using Handle = nb::handle;

double* block_out(nb::handle h, npy_intp K, const Shape& shape, const char* what) {
    npy_intp dims[5];
    int rank = 0;
    if (K >= 0) dims[rank++] = K;  // K < 0: one state
    for (int k = 0; k < shape.rank; ++k) dims[rank++] = shape.dims[k];
    PyObject* o = h.ptr();
    auto* a = reinterpret_cast<PyArrayObject*>(o);
    bool ok = is_double_array(o) && PyArray_NDIM(a) == rank && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a);
    for (int d = 0; ok && d < rank; ++d) ok = PyArray_DIM(a, d) == dims[d];
    if (!ok) throw nb::value_error((std::string(what) + ": expected a writable C-contiguous float64 array of the "
                                                        "robot's shape")
                                       .c_str());
    return static_cast<double*>(PyArray_DATA(a));
}

int factorization_in(nb::handle h) {
    const long code = PyLong_AsLong(h.ptr());
    if (code == -1 && PyErr_Occurred()) throw nb::python_error();
    check_factorization(int(code));
    return int(code);
}

// the options among args[first...] in TAKES's order; θ is kept as a handle, checked per call
template <unsigned TAKES>
Options options_in(const nb::handle* args, int first, nb::handle& theta) {
    Options o;
    if (TAKES & THETA) theta = args[first++];
    if (TAKES & GRAVITY) o.gravity = array_in(args[first++], {3}, "gravity");
    if (TAKES & FACTORIZATION) o.factorization = factorization_in(args[first++]);
    return o;
}

constexpr int option_count(unsigned takes) {
    return int((takes & THETA) != 0) + int((takes & GRAVITY) != 0) + int((takes & FACTORIZATION) != 0);
}

template <int V, unsigned TAKES, typename ShapeOf, typename Kernel, std::size_t... I>
void def_one(nb::module_& m, const char* name, const std::array<const char*, sizeof...(I)>& names, ShapeOf shape,
             Kernel kernel, const char* doc, std::index_sequence<I...>) {
    constexpr int A = int(sizeof...(I));  // q, the V vectors, the options, out
    m.def(
        name,
        [=](Workspace& w, Handle<I>... handles) -> int64_t {
            const nb::handle args[A] = {handles...};
            const Model& model = w.model;
            const Shape one = shape(model);
            double* out = block_out(args[A - 1], -1, one, names[A - 1]);
            nb::handle theta;
            Options o = options_in<TAKES>(args, 1 + V, theta);
            const double* q = vector_in(args[0], model.nq);
            bool ok = q != nullptr;
            Velocities<V> v{};
            for (int k = 0; k < V; ++k) ok = (v[k] = vector_in(args[1 + k], model.nv)) && ok;
            if (TAKES & THETA) ok = ok && parameters_in(theta, model, o.theta);
            if (!ok) return RECHECK;
            return kernel(model, w.data, q, v, o, split(out, one));
        },
        nb::arg("workspace"), nb::arg(names[I])..., doc);
}

template <int V, unsigned TAKES, typename ShapeOf, typename Kernel, std::size_t... I>
void def_batch(nb::module_& m, const char* name, const std::array<const char*, sizeof...(I)>& names, ShapeOf shape,
               Kernel kernel, std::index_sequence<I...>) {
    constexpr int A = int(sizeof...(I));
    m.def(
        name,
        [=](Workspace& w, Handle<I>... handles, nb::handle status, int threads, bool clear) {
            const nb::handle args[A] = {handles...};
            const Model& model = w.model;
            const int n = model.nv, nq = model.nq;
            const npy_intp K = states_in(args[0], nq);
            const double* Q = static_cast<const double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(args[0].ptr())));
            Velocities<V> V0{};
            for (int k = 0; k < V; ++k) V0[k] = array_in(args[1 + k], {K, n}, names[1 + k]);
            nb::handle theta;
            Options o = options_in<TAKES>(args, 1 + V, theta);
            if ((TAKES & THETA) && !parameters_in(theta, model, o.theta))
                throw nb::value_error("theta: expected 10 N finite inertial parameters, or none");
            const Shape one = shape(model);
            double* out = block_out(args[A - 1], K, one, names[A - 1]);
            const int64_t stride = one.size();
            each_state(w, K, status, threads, [&](Data& d, int64_t s) {
                Velocities<V> v;
                for (int k = 0; k < V; ++k) v[k] = V0[k] + s * n;
                // a caller's arrays (out=) hold anything: cleared state by state, while in cache
                if (clear) std::fill(out + stride * s, out + stride * (s + 1), 0.0);
                return kernel(model, d, Q + s * nq, v, o, split(out + stride * s, one));
            });
        },
        nb::arg("workspace"), nb::arg(names[I])..., nb::arg("status"), nb::arg("threads"), nb::arg("clear") = false);
}

// `name` for one state and `name`_batch for K states, from one adapter; the names are literals
// (nanobind keeps the pointers): q, the V vectors, the options, out
template <int V, unsigned TAKES, typename ShapeOf, typename Kernel>
void def_kernel(nb::module_& m, const char* name, const char* batch_name,
                const std::array<const char*, 2 + V + option_count(TAKES)>& names, ShapeOf shape, Kernel kernel,
                const char* doc) {
    using Indices = std::make_index_sequence<2 + V + option_count(TAKES)>;
    def_one<V, TAKES>(m, name, names, shape, kernel, doc, Indices{});
    if (batch_name) def_batch<V, TAKES>(m, batch_name, names, shape, kernel, Indices{});
}

Shape square(const Model& m) { return {2, {m.nv, m.nv}}; }
Shape one_vector(const Model& m) { return {1, {m.nv}}; }
Shape cube(const Model& m) { return {3, {m.nv, m.nv, m.nv}}; }
template <int COUNT>
Shape squares(const Model& m) { return {3, {COUNT, m.nv, m.nv}, COUNT}; }
template <int COUNT>
Shape cubes(const Model& m) { return {4, {COUNT, m.nv, m.nv, m.nv}, COUNT}; }
Shape vectors2(const Model& m) { return {2, {2, m.nv}, 2}; }
// rows of the regressors, 10 N wide: nv + 1 (Y and Yᵀs), nv (Y), 3 nv + 1 (Y_p, Y_c, Y_g, Y_T)
Shape regressor_and_gradient(const Model& m) { return {2, {m.nv + 1, N_PARAMETERS * m.N}}; }
Shape regressor_rows(const Model& m) { return {2, {m.nv, N_PARAMETERS * m.N}}; }
Shape gradient(const Model& m) { return {1, {N_PARAMETERS * m.N}}; }
int64_t regressor_block(const Model& m) { return int64_t(m.nv) * N_PARAMETERS * m.N; }
Shape momentum_regressor_rows(const Model& m) { return {2, {3 * m.nv + 1, N_PARAMETERS * m.N}}; }

}  // namespace

NB_MODULE(compiled, m) {
    if (_import_array() < 0) throw nb::python_error();
    m.doc() = "The compiled kernels of coriolis (C++17): M, Ṁ, C, Γ, τ, g, q̈ and Slotine–Li of a rigid-body tree.";

    // every number the Python layer shares with the core, defined in the core once: the engine
    // reads them (engine/conventions.py); the model, plain data that imports no engine, writes
    // its tables with its own copies, held to these by tests/test_core_constants.py
    m.attr("OK") = OK;
    m.attr("RECHECK") = RECHECK;
    m.attr("SINGULAR") = SINGULAR;
    m.attr("OVERFLOW") = OVERFLOW;
    m.attr("CHRISTOFFEL") = int(CHRISTOFFEL);
    m.attr("FEATHERSTONE") = int(FEATHERSTONE);
    m.attr("PIVOT_SHARE") = PIVOT_SHARE;
    m.attr("TRAJECTORY_COLUMNS") = nb::make_tuple(int(G_COL), int(CQD_COL), int(CTQD_COL), int(P_COL), int(TAU_COL));
    m.attr("TRAJECTORY_QUANTITIES") = int(TRAJECTORY_QUANTITIES);
    m.attr("N_PARAMETERS") = N_PARAMETERS;
    m.attr("CLOSURE_GEOM_WIDTH") = CLOSURE_GEOM_WIDTH;
    m.attr("GEOM_COLUMNS") = nb::make_tuple(G_ROT, G_TRANS, G_AXIS, G_MASS, G_COM, G_INERTIA, G_ROT_HAT, G_ROT_HAT2,
                                            G_PARENT_AXIS, G_ARMATURE, GEOM_WIDTH);
    m.attr("JOINT_CODES") = nb::make_tuple(int(REVOLUTE), int(PRISMATIC), int(FREE), int(SPHERICAL), int(PLANAR),
                                           int(FLOATING));

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

    // ---- the kernels as XLA foreign functions (xla_handlers.hpp), for coriolis_cli.jax ----
    m.def(
        "xla_handlers",
        [] {
            nb::dict handlers;
            for (const auto& h : xla::HANDLERS) {
                nb::list powers;
                for (int k = 0; k < h.outputs; ++k) powers.append(h.powers[k]);
                handlers[h.name] = nb::make_tuple(nb::capsule(reinterpret_cast<void*>(h.handler)), powers);
            }
            return handlers;
        },
        "The XLA foreign-function handlers, name → (capsule for jax.ffi.register_ffi_target, each output's "
        "power of nv per state).");
    m.def(
        "xla_register", [](const Workspace& w) { return xla::register_model(w.model); }, nb::arg("workspace"),
        "A copy of the workspace's robot for the XLA handlers, kept for the process's life; its id.");

    // ---- the kernels, each for one state and (most) for K states (def_kernel) ----
    // one state returns the status code of engine/core/joints.hpp, or RECHECK for an argument to
    // convert; K states on `threads` threads, the GIL released, outputs zeroed by the caller
    def_kernel<0, STATES_ONLY>(m, "mass_matrix", "mass_matrix_batch", {"q", "M"}, square,
                               ADAPT(compute_mass_matrix(model, d, q, out[0])), "M(q) into M (related entries only).");
    def_kernel<2, GRAVITY>(m, "inverse_dynamics", "inverse_dynamics_batch", {"q", "qd", "qdd", "gravity", "tau"},
                           one_vector, ADAPT(compute_inverse_dynamics(model, d, q, v[0], v[1], o.gravity, out[0])),
                           "τ(q, q̇, q̈) into tau.");
    def_kernel<0, GRAVITY>(m, "gravity_vector", "gravity_vector_batch", {"q", "gravity", "g"}, one_vector,
                           ADAPT(compute_gravity_vector(model, d, q, o.gravity, out[0])), "g(q) into g.");
    // M(q), where it is formed, stays in the workspace
    def_kernel<2, GRAVITY>(
        m, "forward_dynamics", "forward_dynamics_batch", {"q", "qd", "tau", "gravity", "qdd"}, one_vector,
        ADAPT(compute_forward_dynamics(model, d, q, v[0], v[1], o.gravity, out[0], d.M.data())), "q̈ into qdd.");
    def_kernel<1, FACTORIZATION>(
        m, "coriolis_matrix", "coriolis_matrix_batch", {"q", "qd", "factorization", "out"}, squares<3>,
        ADAPT(coriolis_matrix(model, d, q, v[0], o.factorization, out[0], out[1], out[2])),
        "M, Ṁ and C (Algorithm 1) into out (3, nv, nv).");
    def_kernel<0, STATES_ONLY>(m, "christoffel", "christoffel_batch", {"q", "Gamma"}, cube,
                               ADAPT(christoffel(model, d, q, out[0])), "Γ (Algorithm 2) into Gamma.");

    // the derivatives: of τ, q̈, Slotine–Li's torque, C(q, q̇) v (Slotine–Li at q̈_r = 0 without
    // gravity), g and Cᵀq̇, and τ's second derivatives
    def_kernel<2, GRAVITY>(
        m, "inverse_dynamics_derivatives", "inverse_dynamics_derivatives_batch", {"q", "qd", "qdd", "gravity", "out"},
        squares<3>, ADAPT(rnea_derivatives(model, d, q, v[0], v[1], o.gravity, out[0], out[1], out[2])),
        "∂τ/∂q, ∂τ/∂q̇ and M (= ∂τ/∂q̈) into out (3, nv, nv).");
    def_kernel<2, GRAVITY>(
        m, "forward_dynamics_derivatives", "forward_dynamics_derivatives_batch", {"q", "qd", "tau", "gravity", "out"},
        squares<3>, ADAPT(forward_dynamics_derivatives(model, d, q, v[0], v[1], o.gravity, out[0], out[1], out[2])),
        "∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ (= ∂q̈/∂τ) into out (3, nv, nv).");
    def_kernel<3, GRAVITY | FACTORIZATION>(
        m, "slotine_li_derivatives", "slotine_li_derivatives_batch",
        {"q", "qd", "qd_r", "qdd_r", "gravity", "factorization", "out"}, squares<4>,
        ADAPT(slotine_li_derivatives(model, d, q, v[0], v[1], v[2], o.gravity, o.factorization, out[0], out[1],
                                     out[2], out[3])),
        "∂τ/∂q, ∂τ/∂q̇, C (= ∂τ/∂q̇_r) and M (= ∂τ/∂q̈_r) into out (4, nv, nv).");
    def_kernel<2, FACTORIZATION>(m, "coriolis_product_derivatives", "coriolis_product_derivatives_batch",
                                 {"q", "qd", "v", "factorization", "out"}, squares<2>,
                                 ADAPT(slotine_li_derivatives(model, d, q, v[0], v[1], d.zero.data(), NO_GRAVITY,
                                                              o.factorization, out[0], out[1], nullptr, nullptr)),
                                 "∂(C v)/∂q and ∂(C v)/∂q̇ into out (2, nv, nv).");
    def_kernel<0, GRAVITY>(m, "gravity_derivatives", "gravity_derivatives_batch", {"q", "gravity", "out"}, square,
                           ADAPT(gravity_derivatives(model, d, q, o.gravity, out[0])), "∂g/∂q into out (nv, nv).");
    def_kernel<1, STATES_ONLY>(
        m, "coriolis_transpose_derivatives", "coriolis_transpose_derivatives_batch", {"q", "qd", "out"}, squares<2>,
        ADAPT(coriolis_transpose_derivatives(model, d, q, v[0], out[0], out[1])),
        "∂(Cᵀq̇)/∂q and ∂(Cᵀq̇)/∂q̇ into out (2, nv, nv).");
    def_kernel<1, STATES_ONLY>(m, "momentum_derivatives", "momentum_derivatives_batch", {"q", "qd", "out"}, square,
                               ADAPT(momentum_derivatives(model, d, q, v[0], out[0])), "∂p/∂q into out (nv, nv).");
    def_kernel<2, GRAVITY>(m, "inverse_dynamics_second_derivatives", "inverse_dynamics_second_derivatives_batch",
                           {"q", "qd", "qdd", "gravity", "out"}, cubes<4>,
                           ADAPT(rnea_second_derivatives(model, d, q, v[0], v[1], o.gravity, out[0], out[1], out[2],
                                                         out[3])),
                           "∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇ and ∂²τ/∂q∂q̈ into out (4, nv, nv, nv).");
    def_kernel<3, GRAVITY>(m, "inverse_dynamics_second_derivatives_contracted",
                           "inverse_dynamics_second_derivatives_contracted_batch",
                           {"q", "qd", "qdd", "lam", "gravity", "out"}, squares<4>,
                           ADAPT(rnea_second_derivatives_contracted(model, d, q, v[0], v[1], v[2], o.gravity, out[0],
                                                                    out[1], out[2], out[3])),
                           "λᵀ∂²τ/∂q², λᵀ∂²τ/∂q̇², λᵀ∂²τ/∂q∂q̇ and λᵀ∂²τ/∂q∂q̈ into out (4, nv, nv).");
    def_kernel<3, GRAVITY>(m, "forward_dynamics_second_derivatives_contracted",
                           "forward_dynamics_second_derivatives_contracted_batch",
                           {"q", "qd", "tau", "lam", "gravity", "out"}, squares<4>,
                           ADAPT(forward_dynamics_second_derivatives_contracted(model, d, q, v[0], v[1], v[2], o.gravity,
                                                                                out[0], out[1], out[2], out[3])),
                           "λᵀ∂²q̈/∂q², λᵀ∂²q̈/∂q̇², λᵀ∂²q̈/∂q∂q̇ and λᵀ∂²q̈/∂q∂τ into out (4, nv, nv).");

    // Slotine–Li's torque (θ of length zero: the model's own parameters), its regressor (one
    // state: Y and Yᵀs; K states: Y alone) and the adaptation gradient Yᵀs
    def_kernel<3, THETA | GRAVITY | FACTORIZATION>(
        m, "slotine_li", nullptr, {"q", "qd", "qd_r", "qdd_r", "theta", "gravity", "factorization", "tau"}, one_vector,
        ADAPT(compute_slotine_li(model, d, q, v[0], v[1], v[2], o.gravity, o.theta, o.factorization, out[0])),
        "The Slotine–Li torque into tau.");
    def_kernel<3, GRAVITY | FACTORIZATION>(
        m, "regressor", nullptr, {"q", "qd", "qd_r", "qdd_r", "gravity", "factorization", "out"}, regressor_and_gradient,
        ADAPT(regressor(model, d, q, v[0], v[1], v[2], o.gravity, o.factorization, out[0],
                        out[0] + regressor_block(model))),
        "Y (related entries only) and Yᵀs into out (nv + 1, 10 N).");
    def_batch<3, GRAVITY | FACTORIZATION>(
        m, "regressor_batch", {"q", "qd", "qd_r", "qdd_r", "gravity", "factorization", "Y"}, regressor_rows,
        ADAPT(regressor(model, d, q, v[0], v[1], v[2], o.gravity, o.factorization, out[0],
                        std::vector<double>(N_PARAMETERS * model.N).data())),
        std::make_index_sequence<7>{});
    def_kernel<3, GRAVITY | FACTORIZATION>(
        m, "adaptation_gradient", nullptr, {"q", "qd", "qd_r", "qdd_r", "gravity", "factorization", "Yts"}, gradient,
        ADAPT(compute_adaptation_gradient(model, d, q, v[0], v[1], v[2], o.gravity, o.factorization, out[0])),
        "Yᵀs without Y.");

    // ---- the momentum terms (engine/core/momentum.hpp) ----
    def_kernel<1, STATES_ONLY>(m, "momentum", "momentum_batch", {"q", "qd", "out"}, vectors2,
                               ADAPT(momentum(model, d, q, v[0], out[0], out[1])), "p = M q̇ and Cᵀq̇ into out (2, nv).");
    def_kernel<1, GRAVITY>(
        m, "momentum_regressors", "momentum_regressor_batch", {"q", "qd", "gravity", "out"}, momentum_regressor_rows,
        ADAPT(momentum_regressors(model, d, q, v[0], o.gravity, out[0], out[0] + regressor_block(model),
                                  out[0] + 2 * regressor_block(model), out[0] + 3 * regressor_block(model))),
        "Y_p, Y_c, Y_g (related entries only) and Y_T into out (3 nv + 1, 10 N).");

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
        "drift_baseline",
        [](nb::handle t, nb::handle R, nb::handle L, nb::handle back, double join, double slow, double hold,
           double catch_up, double after, double after_catch, double average, nb::handle level, nb::handle out) {
            PyObject* o = R.ptr();
            if (!PyArray_Check(o) || PyArray_NDIM(reinterpret_cast<PyArrayObject*>(o)) != 2)
                throw nb::value_error("R: expected a (k, nv) float64 array");
            const npy_intp k = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 0),
                           n = PyArray_DIM(reinterpret_cast<PyArrayObject*>(o), 1);
            PyObject* b = back.ptr();
            if (!PyArray_Check(b) || PyArray_TYPE(reinterpret_cast<PyArrayObject*>(b)) != NPY_INT64 ||
                PyArray_NDIM(reinterpret_cast<PyArrayObject*>(b)) != 1 || PyArray_DIM(reinterpret_cast<PyArrayObject*>(b), 0) != k ||
                !PyArray_IS_C_CONTIGUOUS(reinterpret_cast<PyArrayObject*>(b)))
                throw nb::value_error("back: expected a contiguous (k,) int64 array");
            const int64_t* before = static_cast<const int64_t*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(b)));
            for (npy_intp s = 0; s < k; ++s)
                if (before[s] >= s) throw nb::value_error("back: each sample's index must come before it");
            if (!(average > 0.0 && slow > 0.0 && catch_up > 0.0 && after_catch > 0.0))
                throw nb::value_error("drift_baseline: time constants must be positive");
            drift_baseline(k, int(n), array_in(t, {k}, "t"), array_in(R, {k, n}, "R"), array_in(L, {k, n}, "L"),
                           before, join, slow, hold, catch_up, after, after_catch, average,
                           array_out(level, {k, n}, "level"), array_out(out, {k, n}, "out"));
        },
        nb::arg("t"), nb::arg("R"), nb::arg("L"), nb::arg("back"), nb::arg("join"), nb::arg("slow"),
        nb::arg("hold"), nb::arg("catch_up"), nb::arg("after"), nb::arg("after_catch"), nb::arg("average"),
        nb::arg("level"), nb::arg("out"), "observe's drift-following baseline of the residual R (k, nv) into out.");

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
            if (!kernel_loop(w.model, w.data, what, R, K, q, qd, qdd))
                throw nb::value_error(("kernel_loop: unknown kernel '" + what + "'").c_str());
        },
        nb::arg("workspace"), nb::arg("what"), nb::arg("R"), nb::arg("Q"), nb::arg("QD"), nb::arg("QDD"),
        "Evaluate a kernel (C, Gamma, M, tau, g, fd, slotine) R times over the states, for timing.");

    // ---- closed loops (engine/core/closure.hpp) ----
    // φ(q) into r and ∂φ/∂q into K; given u, K̇ = d(∂φ/∂q)/dt along q̇ = u into K (r untouched)
    m.def(
        "loop_constraints",
        [](Workspace& w, nb::handle q, nb::handle u, nb::handle ci, nb::handle cg, nb::handle support, nb::handle r,
           nb::handle K) -> int64_t {
            npy_intp rows;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            double* Ko = array_out(K, {rows, w.model.nv}, "K");
            const double* qp = vector_in(q, w.model.nq);
            if (u.is_none()) {
                double* ro = array_out(r, {rows}, "r");
                return qp ? loop_constraints(w.model, w.data, qp, c, ro, Ko) : RECHECK;
            }
            const double* up = vector_in(u, w.model.nv);
            return qp && up ? loop_constraint_rate(w.model, w.data, qp, up, c, Ko) : RECHECK;
        },
        nb::arg("workspace"), nb::arg("q"), nb::arg("u").none(), nb::arg("ci"), nb::arg("cg"), nb::arg("support"),
        nb::arg("r").none(), nb::arg("K"), "φ(q) into r and ∂φ/∂q into K, or, given u, K̇ along q̇ = u into K.");

    m.def(
        "loop_newton",
        [](Workspace& w, nb::handle ci, nb::handle cg, nb::handle support, nb::handle table, nb::handle basis,
           nb::handle q, nb::handle x, nb::handle dep, nb::handle r, nb::handle K, double goal, int max_steps) -> int64_t {
            npy_intp rows, nd;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            const LoopCoordinates lc = loop_coordinates_in(w.model, table, basis);
            const int64_t* d = indices_in(dep, nd, int(lc.count), "dep");
            double *qo = array_out(q, {w.model.nq}, "q"), *xo = array_out(x, {lc.count}, "x"),
                   *ro = array_out(r, {rows}, "r"), *Ko = array_out(K, {rows, w.model.nv}, "K");
            return loop_newton(w.model, w.data, c, lc, rows, qo, xo, d, nd, ro, Ko, goal, max_steps);
        },
        nb::arg("workspace"), nb::arg("ci"), nb::arg("cg"), nb::arg("support"), nb::arg("table"), nb::arg("basis"),
        nb::arg("q"), nb::arg("x"), nb::arg("dep"), nb::arg("r"), nb::arg("K"), nb::arg("goal"), nb::arg("max_steps"),
        "Newton's method on the dependent loop coordinates, q and x in place.");

    m.def(
        "loop_continuation",
        [](Workspace& w, nb::handle ci, nb::handle cg, nb::handle support, nb::handle table, nb::handle basis,
           nb::handle q, nb::handle x, nb::handle dep, nb::handle ind, nb::handle x0, nb::handle target, double tol,
           double max_step, nb::handle r, nb::handle K) -> int {
            npy_intp rows, nd, ni;
            const Closures c = closures_in(w.model, ci, cg, support, rows);
            const LoopCoordinates lc = loop_coordinates_in(w.model, table, basis);
            const int64_t *d = indices_in(dep, nd, int(lc.count), "dep"), *i = indices_in(ind, ni, int(lc.count), "ind");
            double *qo = array_out(q, {w.model.nq}, "q"), *xo = array_out(x, {lc.count}, "x"),
                   *ro = array_out(r, {rows}, "r"), *Ko = array_out(K, {rows, w.model.nv}, "K");
            const double *from = array_in(x0, {ni}, "x0"), *to = array_in(target, {ni}, "target");
            // the GIL stays held: a loop solver's workspace serves every thread that asks it
            return loop_continuation(w.model, w.data, c, lc, rows, qo, xo, d, nd, i, ni, from, to, tol, max_step, ro, Ko);
        },
        nb::arg("workspace"), nb::arg("ci"), nb::arg("cg"), nb::arg("support"), nb::arg("table"), nb::arg("basis"),
        nb::arg("q"), nb::arg("x"), nb::arg("dep"), nb::arg("ind"), nb::arg("x0"), nb::arg("target"), nb::arg("tol"),
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
