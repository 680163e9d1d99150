// A floating base's velocity in another representation (model/coordinates.py, BaseVelocityMap),
// block by block. The map is A = blockdiag(X, 1) with Ȧ = blockdiag(Ẋ, 0): only the base's six rows
// and columns change, so eqs. 24-25 cost O(6 nv²) and eq. 27 O(6 nv³) instead of dense products.
// Conventions as iDynTree's (FrameVelocityRepresentation): ν_body = X ν with, R and p the base's
// pose in the world, X = diag(Rᵀ, Rᵀ) for mixed (ν = [ṗ; ᴬω]) and X = [[Rᵀ, −Rᵀ p̂], [0, Rᵀ]] for
// inertial (ν = [ṗ − ᴬω × p; ᴬω]).
#pragma once

#include <cmath>
#include <vector>

#include "joints.hpp"

namespace coriolis {

enum BaseVelocity : int { BODY_VELOCITY = 0, MIXED_VELOCITY = 1, INERTIAL_VELOCITY = 2 };
constexpr int B6 = 6;  // the base's velocity coordinates, first in ν

namespace detail {

// out (3x3) = v̂, the cross-product matrix
inline void hat(const double* v, double* out) {
    out[0] = 0.0;
    out[1] = -v[2];
    out[2] = v[1];
    out[3] = v[2];
    out[4] = 0.0;
    out[5] = -v[0];
    out[6] = -v[1];
    out[7] = v[0];
    out[8] = 0.0;
}

// out = Aᵀ Y (n x m): the base's rows become Xᵀ Y[0:6], the others are copied
inline void transform_rows(const double* X, const double* Y, int n, int m, double* out) {
    for (int j = 0; j < m; ++j) {
        for (int a = 0; a < B6; ++a) {
            double s = 0.0;
            for (int b = 0; b < B6; ++b) s += X[b * 6 + a] * Y[b * m + j];
            out[a * m + j] = s;
        }
        for (int i = B6; i < n; ++i) out[i * m + j] = Y[i * m + j];
    }
}

// Y = Y A in place (n x m): the base's columns become Y[:, 0:6] X
inline void transform_columns(const double* X, double* Y, int n, int m) {
    double t[B6];
    for (int i = 0; i < n; ++i) {
        for (int a = 0; a < B6; ++a) {
            double s = 0.0;
            for (int b = 0; b < B6; ++b) s += Y[i * m + b] * X[b * 6 + a];
            t[a] = s;
        }
        for (int a = 0; a < B6; ++a) Y[i * m + a] = t[a];
    }
}

// G[a, j, k] = Σ_b X[b, a] G[b, j, k] for the base's a < 6, in place, over an n x n x n array
// whose transformed index has stride sa and whose other two have strides sj and sk
inline void transform_index(const double* X, double* G, int n, int64_t sa, int64_t sj, int64_t sk) {
    double t[B6];
    for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k) {
            double* g = G + j * sj + k * sk;
            for (int a = 0; a < B6; ++a) {
                double s = 0.0;
                for (int b = 0; b < B6; ++b) s += X[b * 6 + a] * g[b * sa];
                t[a] = s;
            }
            for (int a = 0; a < B6; ++a) g[a * sa] = t[a];
        }
}

inline void symmetrize(double* Y, int n) {
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            const double s = 0.5 * (Y[i * n + j] + Y[j * n + i]);
            Y[i * n + j] = s;
            Y[j * n + i] = s;
        }
}

}  // namespace detail

// X (6x6), and Ẋ (6x6) along the base velocity nu when nu is given. R = E R(quaternion q[3:7]),
// p = t + E q[0:3].
inline void base_transform(const double* E, const double* t, const double* q, const double* nu, int representation,
                           double* X, double* Xdot) {
    for (int k = 0; k < 36; ++k) {
        X[k] = 0.0;
        Xdot[k] = 0.0;
    }
    if (representation == BODY_VELOCITY) {
        for (int k = 0; k < B6; ++k) X[k * 6 + k] = 1.0;
        return;
    }
    const double x = q[3], y = q[4], z = q[5], w = q[6];
    const double nrm = std::sqrt(x * x + y * y + z * z + w * w);
    double Q6[36], Rq[9], Rt[9], Ph[9], Rd[9], T[9], p[3];
    quaternion_matrix(x / nrm, y / nrm, z / nrm, w / nrm, Q6, 0);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) Rq[r * 3 + c] = Q6[r * 6 + c];
    for (int r = 0; r < 3; ++r) {
        p[r] = t[r] + E[r * 3 + 0] * q[0] + E[r * 3 + 1] * q[1] + E[r * 3 + 2] * q[2];
        for (int c = 0; c < 3; ++c)
            Rt[c * 3 + r] = E[r * 3 + 0] * Rq[0 * 3 + c] + E[r * 3 + 1] * Rq[1 * 3 + c] + E[r * 3 + 2] * Rq[2 * 3 + c];
    }
    detail::hat(p, Ph);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            X[r * 6 + c] = Rt[r * 3 + c];
            X[(3 + r) * 6 + 3 + c] = Rt[r * 3 + c];
            if (representation == INERTIAL_VELOCITY)
                X[r * 6 + 3 + c] = -(Rt[r * 3 + 0] * Ph[0 * 3 + c] + Rt[r * 3 + 1] * Ph[1 * 3 + c] + Rt[r * 3 + 2] * Ph[2 * 3 + c]);
        }
    if (!nu) return;
    double wb[3];  // ᴮω = Rᵀ ᴬω
    for (int r = 0; r < 3; ++r) wb[r] = Rt[r * 3 + 0] * nu[3] + Rt[r * 3 + 1] * nu[4] + Rt[r * 3 + 2] * nu[5];
    detail::hat(wb, T);
    for (int r = 0; r < 3; ++r)  // d/dt Rᵀ = −ᴮω̂ Rᵀ
        for (int c = 0; c < 3; ++c) {
            Rd[r * 3 + c] = -(T[r * 3 + 0] * Rt[0 * 3 + c] + T[r * 3 + 1] * Rt[1 * 3 + c] + T[r * 3 + 2] * Rt[2 * 3 + c]);
            Xdot[r * 6 + c] = Rd[r * 3 + c];
            Xdot[(3 + r) * 6 + 3 + c] = Rd[r * 3 + c];
        }
    if (representation == INERTIAL_VELOCITY) {  // d/dt (−Rᵀ p̂) = −(d/dt Rᵀ) p̂ − Rᵀ ṗ̂, ṗ = v_I + ω × p
        double pd[3];
        for (int r = 0; r < 3; ++r) pd[r] = nu[r] - (Ph[r * 3 + 0] * nu[3] + Ph[r * 3 + 1] * nu[4] + Ph[r * 3 + 2] * nu[5]);
        detail::hat(pd, T);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                Xdot[r * 6 + 3 + c] =
                    -(Rd[r * 3 + 0] * Ph[0 * 3 + c] + Rd[r * 3 + 1] * Ph[1 * 3 + c] + Rd[r * 3 + 2] * Ph[2 * 3 + c]) -
                    (Rt[r * 3 + 0] * T[0 * 3 + c] + Rt[r * 3 + 1] * T[1 * 3 + c] + Rt[r * 3 + 2] * T[2 * 3 + c]);
    }
}

// eqs. 24-25: M̄ = AᵀMA, C̄ = AᵀCA + AᵀMȦ, Ṁ̄ = AᵀṀA + AᵀMȦ + (AᵀMȦ)ᵀ; M̄ and Ṁ̄ symmetrized
inline void base_coriolis(const double* X, const double* Xdot, const double* M, const double* Mdot, const double* C,
                          int n, double* Mbar, double* Mdotbar, double* Cbar) {
    const double* in[3] = {M, Mdot, C};
    double* out[3] = {Mbar, Mdotbar, Cbar};
    for (int k = 0; k < 3; ++k) {
        detail::transform_rows(X, in[k], n, n, out[k]);
        detail::transform_columns(X, out[k], n, n);
    }
    // AᵀMȦ: nonzero in the base's columns only, (AᵀM)[:, 0:6] Ẋ
    std::vector<double> K(size_t(n) * B6);
    for (int i = 0; i < n; ++i)
        for (int b = 0; b < B6; ++b) {
            if (i < B6) {
                double s = 0.0;
                for (int c = 0; c < B6; ++c) s += X[c * 6 + i] * M[c * n + b];
                K[i * B6 + b] = s;
            } else {
                K[i * B6 + b] = M[i * n + b];
            }
        }
    for (int i = 0; i < n; ++i)
        for (int a = 0; a < B6; ++a) {
            double s = 0.0;
            for (int b = 0; b < B6; ++b) s += K[i * B6 + b] * Xdot[b * 6 + a];
            Cbar[i * n + a] += s;
            Mdotbar[i * n + a] += s;
            Mdotbar[a * n + i] += s;
        }
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            for (double* Y : {Mbar, Mdotbar}) {
                const double s = 0.5 * (Y[i * n + j] + Y[j * n + i]);
                Y[i * n + j] = s;
                Y[j * n + i] = s;
            }
}

// eq. 27 for generalized speeds: Γ̄_ijk = Σ A_αi A_βj A_γk Γ_αβγ + Σ_β (AᵀM)_iβ Ȧ(e_k)_βj, with
// Ȧ(e_k) = blockdiag(Xdot_basis[k], 0) for the base's k < 6 and zero for the joints'
inline void base_christoffel(const double* X, const double* Xdot_basis, const double* M, const double* Gamma, int n,
                             double* out) {
    const int64_t nn = int64_t(n) * n;
    for (int64_t k = 0; k < nn * n; ++k) out[k] = Gamma[k];
    // the first, second and third index in turn: G[a, j, k] = Σ_b X[b, a] G[b, j, k] for a < 6, the
    // transformed index a at stride sa and the other two, j and k, at sj and sk
    const int64_t n1 = n;
    detail::transform_index(X, out, n, nn, n1, 1);
    detail::transform_index(X, out, n, n1, nn, 1);
    detail::transform_index(X, out, n, 1, nn, n1);
    for (int i = 0; i < n; ++i)
        for (int b = 0; b < B6; ++b) {  // (AᵀM)[i, b]
            double m;
            if (i < B6) {
                m = 0.0;
                for (int c = 0; c < B6; ++c) m += X[c * 6 + i] * M[c * n + b];
            } else {
                m = M[i * n + b];
            }
            if (m != 0.0)
                for (int j = 0; j < B6; ++j)
                    for (int k = 0; k < B6; ++k) out[i * nn + j * n + k] += m * Xdot_basis[k * 36 + b * 6 + j];
        }
}

// the tree's reference state: out (3 x n) = (A q̄̇, A q̄̇_r, A q̄̈_r + Ȧ q̄̇_r)
inline void base_reference(const double* X, const double* Xdot, const double* qd, const double* qd_r,
                           const double* qdd_r, int n, double* out) {
    for (int k = B6; k < n; ++k) {
        out[k] = qd[k];
        out[n + k] = qd_r[k];
        out[2 * n + k] = qdd_r[k];
    }
    for (int a = 0; a < B6; ++a) {
        double v = 0.0, vr = 0.0, ar = 0.0;
        for (int b = 0; b < B6; ++b) {
            v += X[a * 6 + b] * qd[b];
            vr += X[a * 6 + b] * qd_r[b];
            ar += X[a * 6 + b] * qdd_r[b] + Xdot[a * 6 + b] * qd_r[b];
        }
        out[a] = v;
        out[n + a] = vr;
        out[2 * n + a] = ar;
    }
}

// M̄ = AᵀMA, symmetrized
inline void base_mass_matrix(const double* X, const double* M, int n, double* Mbar) {
    detail::transform_rows(X, M, n, n, Mbar);
    detail::transform_columns(X, Mbar, n, n);
    detail::symmetrize(Mbar, n);
}

}  // namespace coriolis
