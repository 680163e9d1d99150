// Loop-closure constraints φ(q), their Jacobian K = ∂φ/∂q and its rate K̇, and the loop solve
// (Newton's method and continuation) on the dependent coordinates.
//
// Closure c joins a frame fixed in body P (rotation RP, origin oP in P's frame) to one fixed in
// body C. Rows per closure: the frames' origins coincide (3 rows: p_P − p_C); a revolute closure
// keeps the axis a aligned, n_k · a_C = 0 for the two normals n_k = R_P n_k⁰ (2 rows); a weld
// also keeps the frames from turning about it, n_1 · n_2,C = 0 (1 row). With ω_j, v_j the parts
// of S_j in the computation frame and s_Xj = 1 when joint j moves body X:
//
//   ∂(p_P − p_C)/∂q_j = s_Pj (v_j + ω_j × p_P) − s_Cj (v_j + ω_j × p_C)
//   ∂(u_P · w_C)/∂q_j = (s_Pj − s_Cj) ω_j · (u_P × w_C)
//
// and their rates follow from Ṡ_j = v_body(j) × S_j, ṗ_X = v_X + ω_X × p_X, ṅ_k = ω_P × n_k and
// ȧ_C = ω_C × a_C. Packed closures: ci (C x 3) = body P, body C (N for the world), orientation rows;
// cg (C x 33) = RP, oP, RC, oC, axis, n1, n2; support ((N + 1) x nv) = s_Xj, row N all zero.
//
// The solve moves the loops' joints through scalar coordinates x: a 1-DoF joint's value, or one of
// a spherical joint's three angles θ = (α, β, γ) with R_J = B Rx(α) Ry(β) Rz(γ) Bᵀ, B the joint's
// axes (a rod's turn about its own line is γ, which moves no point on the line). The joint's
// angular velocity in its child frame is ω = B J(θ) θ̇, so ∂φ/∂x = K E with E = B J on the joint's
// three columns and the identity on a 1-DoF joint's:
//
//   J(θ) = [[cβ cγ, sγ, 0], [−cβ sγ, cγ, 0], [sβ, 0, 1]]   (singular at β = ±π/2).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kinematics.hpp"

namespace coriolis {

struct Closures {
    int64_t count;
    const int64_t* ci;       // count x 3
    const double* cg;        // count x CLOSURE_GEOM_WIDTH
    const double* support;   // (N + 1) x nv
};

constexpr int CLOSURE_GEOM_WIDTH = 33;

// The loops' joints as the solve's coordinates x (see the head of this file). Row k of table:
// kind (0: a 1-DoF joint; 1, 2, 3: the angle α, β, γ of a spherical joint, three rows in that
// order), the joint's q index and its first v index; row k of basis: that spherical joint's B.
struct LoopCoordinates {
    int64_t count;
    const int64_t* table;  // count x 3
    const double* basis;   // count x 9, row-major
};

namespace detail {

constexpr int C_RP = 0, C_OP = 9, C_RC = 12, C_OC = 21, C_AXIS = 24, C_N1 = 27, C_N2 = 30;

// a closure frame's rotation R and origin p in the computation frame
inline void closure_frame(const double* X, int N, int64_t b, const double* g, int R_off, int o_off, double* R,
                          double* p) {
    for (int r = 0; r < 3; ++r) {
        if (b >= N) {  // welded to the world: stored in the computation frame
            p[r] = g[o_off + r];
            for (int k = 0; k < 3; ++k) R[r * 3 + k] = g[R_off + 3 * r + k];
        } else {
            const double* Xb = X + 36 * b;
            p[r] = Xb[3 * 6 + r];
            for (int k = 0; k < 3; ++k) {
                p[r] += Xb[r * 6 + k] * g[o_off + k];
                R[r * 3 + k] = 0.0;
                for (int m = 0; m < 3; ++m) R[r * 3 + k] += Xb[r * 6 + m] * g[R_off + 3 * m + k];
            }
        }
    }
}

inline void rotate(const double* R, const double* g, int off, double* out) {
    for (int r = 0; r < 3; ++r) out[r] = R[r * 3 + 0] * g[off] + R[r * 3 + 1] * g[off + 1] + R[r * 3 + 2] * g[off + 2];
}

inline void cross3(const double* a, const double* b, double* out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

// orientation row k's directions: u in frame P, w in frame C (n_k, a for k < 2; n_1, n_2)
inline void directions(const double* RP, const double* RC, const double* g, int64_t k, double* u, double* w) {
    rotate(RP, g, k != 1 ? C_N1 : C_N2, u);
    rotate(RC, g, k < 2 ? C_AXIS : C_N2, w);
}

// closure c's two bodies, rows, geometry and support rows, and its frames at the placements X
struct ClosureFrames {
    int64_t bP, bC, rows;
    const double *g, *sP, *sC;
    double RP[9], RC[9], pP[3], pC[3];

    ClosureFrames(const Closures& cl, const double* X, int N, int nv, int64_t c)
        : bP(cl.ci[3 * c]), bC(cl.ci[3 * c + 1]), rows(cl.ci[3 * c + 2]), g(cl.cg + CLOSURE_GEOM_WIDTH * c),
          sP(cl.support + bP * nv), sC(cl.support + bC * nv) {
        closure_frame(X, N, bP, g, C_RP, C_OP, RP, pP);
        closure_frame(X, N, bC, g, C_RC, C_OC, RC, pC);
    }
};

// J(θ) of the head of this file, row-major
inline void euler_rates(const double* th, double* J) {
    const double cb = std::cos(th[1]), sb = std::sin(th[1]), cg = std::cos(th[2]), sg = std::sin(th[2]);
    J[0] = cb * cg;
    J[1] = sg;
    J[2] = 0.0;
    J[3] = -cb * sg;
    J[4] = cg;
    J[5] = 0.0;
    J[6] = sb;
    J[7] = 0.0;
    J[8] = 1.0;
}

// the unit quaternion (x, y, z, w) of the rotation R (row-major), largest component first
inline void matrix_quaternion(const double* R, double* out) {
    const double t = R[0] + R[4] + R[8];
    double x, y, z, w;
    if (t >= R[0] && t >= R[4] && t >= R[8]) {
        w = 0.5 * std::sqrt(1.0 + t);
        x = (R[7] - R[5]) / (4.0 * w);
        y = (R[2] - R[6]) / (4.0 * w);
        z = (R[3] - R[1]) / (4.0 * w);
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        x = 0.5 * std::sqrt(1.0 + R[0] - R[4] - R[8]);
        w = (R[7] - R[5]) / (4.0 * x);
        y = (R[1] + R[3]) / (4.0 * x);
        z = (R[2] + R[6]) / (4.0 * x);
    } else if (R[4] >= R[8]) {
        y = 0.5 * std::sqrt(1.0 - R[0] + R[4] - R[8]);
        w = (R[2] - R[6]) / (4.0 * y);
        x = (R[1] + R[3]) / (4.0 * y);
        z = (R[5] + R[7]) / (4.0 * y);
    } else {
        z = 0.5 * std::sqrt(1.0 - R[0] - R[4] + R[8]);
        w = (R[3] - R[1]) / (4.0 * z);
        x = (R[2] + R[6]) / (4.0 * z);
        y = (R[5] + R[7]) / (4.0 * z);
    }
    out[0] = x;
    out[1] = y;
    out[2] = z;
    out[3] = w;
}

// the loops' joints of q at the coordinates x
inline void loop_configuration(const LoopCoordinates& lc, const double* x, double* q) {
    for (int64_t k = 0; k < lc.count; ++k) {
        const int64_t kind = lc.table[3 * k], qi = lc.table[3 * k + 1];
        if (kind == 0) {
            q[qi] = x[k];
        } else if (kind == 1) {  // R_J = B Rx(α) Ry(β) Rz(γ) Bᵀ
            const double ca = std::cos(x[k]), sa = std::sin(x[k]), cb = std::cos(x[k + 1]), sb = std::sin(x[k + 1]),
                         cg = std::cos(x[k + 2]), sg = std::sin(x[k + 2]);
            const double E[9] = {cb * cg,  -cb * sg, sb, ca * sg + sa * sb * cg, ca * cg - sa * sb * sg, -sa * cb,
                                 sa * sg - ca * sb * cg, sa * cg + ca * sb * sg, ca * cb};
            const double* B = lc.basis + 9 * k;
            double BE[9], R[9];
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) BE[3 * r + c] = B[3 * r] * E[c] + B[3 * r + 1] * E[3 + c] + B[3 * r + 2] * E[6 + c];
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) R[3 * r + c] = BE[3 * r] * B[3 * c] + BE[3 * r + 1] * B[3 * c + 1] + BE[3 * r + 2] * B[3 * c + 2];
            matrix_quaternion(R, q + qi);
        }
    }
}

// ∂φ/∂x = K E into Kx (m x count) from K (m x nv)
inline void coordinate_jacobian(const LoopCoordinates& lc, const double* x, const double* K, int64_t m, int nv,
                                double* Kx) {
    const int64_t n = lc.count;
    for (int64_t k = 0; k < n; ++k) {
        const int64_t kind = lc.table[3 * k], vi = lc.table[3 * k + 2];
        if (kind == 0) {
            for (int64_t i = 0; i < m; ++i) Kx[i * n + k] = K[i * nv + vi];
            continue;
        }
        const int64_t first = k - (kind - 1);  // the joint's α row
        double J[9], e[3];
        euler_rates(x + first, J);
        const double* B = lc.basis + 9 * k;
        for (int r = 0; r < 3; ++r)  // column kind − 1 of B J
            e[r] = B[3 * r] * J[kind - 1] + B[3 * r + 1] * J[3 + kind - 1] + B[3 * r + 2] * J[6 + kind - 1];
        for (int64_t i = 0; i < m; ++i)
            Kx[i * n + k] = K[i * nv + vi] * e[0] + K[i * nv + vi + 1] * e[1] + K[i * nv + vi + 2] * e[2];
    }
}

inline double norm(const double* x, int64_t n) {
    double s = 0.0;
    for (int64_t k = 0; k < n; ++k) s += x[k] * x[k];
    return std::sqrt(s);
}

// argmin ‖K_d x − rhs‖ through the normal equations K_dᵀK_d x = K_dᵀ rhs, by Gaussian elimination
// with partial pivoting (a few unknowns); NaN where K_d loses rank (a failed step for the callers)
inline void dependent_solve(const double* K, int64_t m, int nv, const int64_t* dep_v, int64_t nd, const double* rhs,
                            double* x) {
    std::vector<double> A(nd * (nd + 1));
    auto a = [&](int64_t i, int64_t j) -> double& { return A[i * (nd + 1) + j]; };
    for (int64_t i = 0; i < nd; ++i) {
        for (int64_t j = 0; j < nd; ++j) {
            double acc = 0.0;
            for (int64_t k = 0; k < m; ++k) acc += K[k * nv + dep_v[i]] * K[k * nv + dep_v[j]];
            a(i, j) = acc;
        }
        double acc = 0.0;
        for (int64_t k = 0; k < m; ++k) acc += K[k * nv + dep_v[i]] * rhs[k];
        a(i, nd) = acc;
    }
    double scale = 0.0;
    for (int64_t i = 0; i < nd; ++i) scale = std::fabs(a(i, i)) > scale ? std::fabs(a(i, i)) : scale;
    for (int64_t c = 0; c < nd; ++c) {
        int64_t p = c;
        for (int64_t i = c + 1; i < nd; ++i)
            if (std::fabs(a(i, c)) > std::fabs(a(p, c))) p = i;
        if (!(std::fabs(a(p, c)) > 1e-24 * scale)) {
            for (int64_t i = 0; i < nd; ++i) x[i] = std::numeric_limits<double>::quiet_NaN();
            return;
        }
        for (int64_t j = 0; j < nd + 1; ++j) std::swap(a(c, j), a(p, j));
        for (int64_t i = c + 1; i < nd; ++i) {
            const double f = a(i, c) / a(c, c);
            for (int64_t j = c; j < nd + 1; ++j) a(i, j) -= f * a(c, j);
        }
    }
    for (int64_t i = nd - 1; i >= 0; --i) {
        double acc = a(i, nd);
        for (int64_t j = i + 1; j < nd; ++j) acc -= a(i, j) * x[j];
        x[i] = acc / a(i, i);
    }
}

}  // namespace detail

// φ(q) into r and K = ∂φ/∂q into K (rows x nv); returns the configuration's status code
inline int64_t loop_constraints(const Model& model, Data& data, const double* q, const Closures& cl, double* r,
                                double* K) {
    const int N = model.N, n = model.nv;
    const int64_t status = placements(model, data, q);
    if (failed(status)) return status;
    const double *X = data.X.data(), *S = data.S.data();
    double aC[3], nk[3], t[3];
    int64_t row = 0;
    for (int64_t c = 0; c < cl.count; ++c) {
        const detail::ClosureFrames f(cl, X, N, n, c);
        const double *pP = f.pP, *pC = f.pC, *sPr = f.sP, *sCr = f.sC;
        for (int k = 0; k < 3; ++k) r[row + k] = pP[k] - pC[k];
        for (int j = 0; j < n; ++j) {
            const double sP = sPr[j], sC = sCr[j], *Sj = S + 6 * j;
            const double w0 = Sj[0], w1 = Sj[1], w2 = Sj[2];
            K[row * n + j] = (sP - sC) * Sj[3] + sP * (w1 * pP[2] - w2 * pP[1]) - sC * (w1 * pC[2] - w2 * pC[1]);
            K[(row + 1) * n + j] = (sP - sC) * Sj[4] + sP * (w2 * pP[0] - w0 * pP[2]) - sC * (w2 * pC[0] - w0 * pC[2]);
            K[(row + 2) * n + j] = (sP - sC) * Sj[5] + sP * (w0 * pP[1] - w1 * pP[0]) - sC * (w0 * pC[1] - w1 * pC[0]);
        }
        for (int64_t k = 0; k < f.rows; ++k) {
            detail::directions(f.RP, f.RC, f.g, k, nk, aC);
            r[row + 3 + k] = nk[0] * aC[0] + nk[1] * aC[1] + nk[2] * aC[2];
            detail::cross3(nk, aC, t);
            for (int j = 0; j < n; ++j)
                K[(row + 3 + k) * n + j] =
                    (sPr[j] - sCr[j]) * (S[6 * j] * t[0] + S[6 * j + 1] * t[1] + S[6 * j + 2] * t[2]);
        }
        row += 3 + f.rows;
    }
    return status;
}

// K̇ along the joint velocity u into Kdot; returns the configuration's status code
inline int64_t loop_constraint_rate(const Model& model, Data& data, const double* q, const double* u,
                                    const Closures& cl, double* Kdot) {
    const int N = model.N, n = model.nv;
    const int64_t status = placements(model, data, q);
    if (failed(status)) return status;
    const double *X = data.X.data(), *S = data.S.data(), *Sd = data.Sdot.data(), *v = data.v.data();
    body_velocities(model, data.S.data(), u, data.v.data(), data.Sdot.data());  // v_b, Ṡ_j = v_body(j) × S_j
    double dP[3], dC[3], aC[3], aCd[3], nk[3], nkd[3], t[3], td[3];
    int64_t row = 0;
    for (int64_t c = 0; c < cl.count; ++c) {
        const detail::ClosureFrames f(cl, X, N, n, c);
        const int64_t bP = f.bP, bC = f.bC;
        const double *pP = f.pP, *pC = f.pC, *sPr = f.sP, *sCr = f.sC;
        double wP[3], wC[3];
        for (int k = 0; k < 3; ++k) {  // the bodies' angular velocities, and ṗ = v_O + ω × p
            wP[k] = bP < N ? v[6 * bP + k] : 0.0;
            wC[k] = bC < N ? v[6 * bC + k] : 0.0;
        }
        detail::cross3(wP, pP, dP);
        detail::cross3(wC, pC, dC);
        for (int k = 0; k < 3; ++k) {
            dP[k] += bP < N ? v[6 * bP + 3 + k] : 0.0;
            dC[k] += bC < N ? v[6 * bC + 3 + k] : 0.0;
        }
        for (int j = 0; j < n; ++j) {
            const double sP = sPr[j], sC = sCr[j], *Sj = S + 6 * j, *Sdj = Sd + 6 * j;
            const double w0 = Sj[0], w1 = Sj[1], w2 = Sj[2], e0 = Sdj[0], e1 = Sdj[1], e2 = Sdj[2];
            Kdot[row * n + j] = (sP - sC) * Sdj[3] + sP * (e1 * pP[2] - e2 * pP[1] + w1 * dP[2] - w2 * dP[1]) -
                                sC * (e1 * pC[2] - e2 * pC[1] + w1 * dC[2] - w2 * dC[1]);
            Kdot[(row + 1) * n + j] = (sP - sC) * Sdj[4] + sP * (e2 * pP[0] - e0 * pP[2] + w2 * dP[0] - w0 * dP[2]) -
                                      sC * (e2 * pC[0] - e0 * pC[2] + w2 * dC[0] - w0 * dC[2]);
            Kdot[(row + 2) * n + j] = (sP - sC) * Sdj[5] + sP * (e0 * pP[1] - e1 * pP[0] + w0 * dP[1] - w1 * dP[0]) -
                                      sC * (e0 * pC[1] - e1 * pC[0] + w0 * dC[1] - w1 * dC[0]);
        }
        for (int64_t k = 0; k < f.rows; ++k) {
            detail::directions(f.RP, f.RC, f.g, k, nk, aC);
            detail::cross3(wC, aC, aCd);
            detail::cross3(wP, nk, nkd);
            detail::cross3(nk, aC, t);  // d/dt (n × a_C) = ṅ × a_C + n × ȧ_C
            detail::cross3(nkd, aC, td);
            detail::cross3(nk, aCd, dP);
            for (int m = 0; m < 3; ++m) td[m] += dP[m];
            for (int j = 0; j < n; ++j)
                Kdot[(row + 3 + k) * n + j] =
                    (sPr[j] - sCr[j]) * (S[6 * j] * td[0] + S[6 * j + 1] * td[1] + S[6 * j + 2] * td[2] +
                                         Sd[6 * j] * t[0] + Sd[6 * j + 1] * t[1] + Sd[6 * j + 2] * t[2]);
        }
        row += 3 + f.rows;
    }
    return status;
}

// Newton's method on the dependent coordinates x[dep] of φ(q(x)) = 0, in place (x and the loops'
// joints of q), until ‖φ‖ ≤ goal or the steps stall at round-off; every step halved until it does
// not raise ‖φ‖. r and K end as φ and ∂φ/∂q at the final q. Returns the configuration's status code.
inline int64_t loop_newton(const Model& model, Data& data, const Closures& cl, const LoopCoordinates& lc, int64_t m,
                           double* q, double* x, const int64_t* dep, int64_t nd, double* r, double* K, double goal,
                           int max_steps) {
    const int n = model.nv, nq = model.nq;
    const int64_t nx = lc.count;
    detail::loop_configuration(lc, x, q);
    const int64_t status = loop_constraints(model, data, q, cl, r, K);
    if (failed(status)) return status;
    std::vector<double> trial(nq), trial_x(nx), r2(m), K2(m * n), Kx(m * nx), step(nd), rhs(m);
    for (int it = 0; it < max_steps; ++it) {
        const double base = detail::norm(r, m);
        if (!(base > goal)) break;
        for (int64_t k = 0; k < m; ++k) rhs[k] = -r[k];
        detail::coordinate_jacobian(lc, x, K, m, n, Kx.data());
        detail::dependent_solve(Kx.data(), m, int(nx), dep, nd, rhs.data(), step.data());
        bool finite = true;
        for (int64_t k = 0; k < nd; ++k) finite = finite && std::isfinite(step[k]);
        if (!finite) break;
        double t = 1.0;
        while (true) {
            std::copy(q, q + nq, trial.begin());
            std::copy(x, x + nx, trial_x.begin());
            for (int64_t k = 0; k < nd; ++k) trial_x[dep[k]] += t * step[k];
            detail::loop_configuration(lc, trial_x.data(), trial.data());
            loop_constraints(model, data, trial.data(), cl, r2.data(), K2.data());
            if (detail::norm(r2.data(), m) <= base || t < 1e-6) break;
            t *= 0.5;
        }
        std::copy(trial.begin(), trial.end(), q);
        std::copy(trial_x.begin(), trial_x.end(), x);
        std::copy(r2.begin(), r2.end(), r);
        std::copy(K2.begin(), K2.end(), K);
        double size = 0.0;
        for (int64_t k = 0; k < nd; ++k) size += x[dep[k]] * x[dep[k]];
        if (t * detail::norm(step.data(), nd) <= 1e-15 * (1.0 + std::sqrt(size))) break;
    }
    return status;
}

// Follow the assembly from x (closed, its independent loop coordinates x[ind] = x0) to
// x[ind] = target: predictor x_d += −(K_x)_d⁺ (K_x)_i Δx, Newton corrector, steps doubled after a
// success and halved where the corrector fails or jumps further than the step could explain. On
// the way the corrector stops near the branch (1e3 tol), at the end at round-off. q, x, r, K are
// updated in place. Returns 0 when closed at the target, 1 when not.
inline int loop_continuation(const Model& model, Data& data, const Closures& cl, const LoopCoordinates& lc, int64_t m,
                             double* q, double* x, const int64_t* dep, int64_t nd, const int64_t* ind, int64_t ni,
                             const double* x0, const double* target, double tol, double max_step, double* r,
                             double* K) {
    const int n = model.nv, nq = model.nq;
    const int64_t nx = lc.count;
    double span = 0.0;
    for (int64_t i = 0; i < ni; ++i) span = std::max(span, std::fabs(target[i] - x0[i]));
    const double largest = span > 0.0 ? std::min(1.0, max_step / span) : 1.0;
    double s = 0.0, ds = largest;
    detail::loop_configuration(lc, x, q);
    const int64_t status = loop_constraints(model, data, q, cl, r, K);
    if (failed(status)) return 1;
    std::vector<double> trial(nq), trial_x(nx), r2(m), K2(m * n), Kx(m * nx), dx(ni), rhs(m), predicted(nd), before(nd);
    while (s < 1.0) {
        double h = std::min(ds, 1.0 - s);
        // the last step ends exactly at the target: steps of 1/6 add up to 0.9999999999999999, and a
        // step of 1e-16 after them would have to explain the loose corrector's whole remainder
        const bool last = 1.0 - s - h <= 1e-9;
        if (last) h = 1.0 - s;
        detail::coordinate_jacobian(lc, x, K, m, n, Kx.data());
        std::fill(rhs.begin(), rhs.end(), 0.0);
        for (int64_t i = 0; i < ni; ++i) {
            dx[i] = x0[i] + (s + h) * (target[i] - x0[i]) - x[ind[i]];
            for (int64_t k = 0; k < m; ++k) rhs[k] += Kx[k * nx + ind[i]] * dx[i];
        }
        detail::dependent_solve(Kx.data(), m, int(nx), dep, nd, rhs.data(), predicted.data());
        std::copy(q, q + nq, trial.begin());
        std::copy(x, x + nx, trial_x.begin());
        for (int64_t i = 0; i < ni; ++i) trial_x[ind[i]] = x0[i] + (s + h) * (target[i] - x0[i]);
        for (int64_t k = 0; k < nd; ++k) trial_x[dep[k]] -= predicted[k];
        for (int64_t k = 0; k < nd; ++k) before[k] = trial_x[dep[k]];
        const double goal = last ? tol * 1e-5 : tol * 1e3;
        loop_newton(model, data, cl, lc, m, trial.data(), trial_x.data(), dep, nd, r2.data(), K2.data(), goal,
                    last ? 60 : 12);
        double jump = 0.0;
        for (int64_t k = 0; k < nd; ++k) jump += (trial_x[dep[k]] - before[k]) * (trial_x[dep[k]] - before[k]);
        if (detail::norm(r2.data(), m) <= (last ? tol : 1e3 * tol) &&
            std::sqrt(jump) <= 0.5 * (detail::norm(predicted.data(), nd) + detail::norm(dx.data(), ni)) + tol) {
            std::copy(trial.begin(), trial.end(), q);
            std::copy(trial_x.begin(), trial_x.end(), x);
            std::copy(r2.begin(), r2.end(), r);
            std::copy(K2.begin(), K2.end(), K);
            s = last ? 1.0 : s + h;
            ds = std::min(2.0 * h, largest);
        } else {
            ds = 0.5 * h;
            if (ds < 1e-7) return 1;
        }
    }
    return detail::norm(r, m) <= tol ? 0 : 1;
}

}  // namespace coriolis
