// Spatial algebra on flat arrays, angular-first (Featherstone): v = [ω; v_O], f = [n_O; f].
//
//   crm(v) = [[ω×, 0], [v×, ω×]]                  motion cross
//   crf(v) = −crm(v)ᵀ = [[ω×, v×], [0, ω×]]       force cross, v ×*
//   (f ×̄*) = [[−n×, −f×], [−f×, 0]]               so that (f ×̄*) w = w ×* f
//   B(v, I) = ½ [crf(v) I + (I v) ×̄* − I crm(v)]  core paper eq. (10), Christoffel-consistent
//   B(v, I) = crf(v) I                            eq. (9), admissible only
//
// The operation order is the one the listings' Python reference used, so that results are equal
// to the last bit; write no expression in another order.
#pragma once

namespace coriolis {

enum Factorization : int { CHRISTOFFEL = 0, FEATHERSTONE = 1 };

inline void crm_mat(const double* v, double* out) {
    for (int k = 0; k < 36; ++k) out[k] = 0.0;
    const double w0 = v[0], w1 = v[1], w2 = v[2], l0 = v[3], l1 = v[4], l2 = v[5];
    for (int o : {0, 3}) {
        out[(o + 0) * 6 + o + 1] = -w2;
        out[(o + 0) * 6 + o + 2] = w1;
        out[(o + 1) * 6 + o + 0] = w2;
        out[(o + 1) * 6 + o + 2] = -w0;
        out[(o + 2) * 6 + o + 0] = -w1;
        out[(o + 2) * 6 + o + 1] = w0;
    }
    out[3 * 6 + 1] = -l2;
    out[3 * 6 + 2] = l1;
    out[4 * 6 + 0] = l2;
    out[4 * 6 + 2] = -l0;
    out[5 * 6 + 0] = -l1;
    out[5 * 6 + 1] = l0;
}

// out = v × w
inline void crm_vec(const double* v, const double* w, double* out) {
    const double w0 = v[0], w1 = v[1], w2 = v[2], l0 = v[3], l1 = v[4], l2 = v[5];
    const double a0 = w[0], a1 = w[1], a2 = w[2], b0 = w[3], b1 = w[4], b2 = w[5];
    out[0] = w1 * a2 - w2 * a1;
    out[1] = w2 * a0 - w0 * a2;
    out[2] = w0 * a1 - w1 * a0;
    out[3] = w1 * b2 - w2 * b1 + l1 * a2 - l2 * a1;
    out[4] = w2 * b0 - w0 * b2 + l2 * a0 - l0 * a2;
    out[5] = w0 * b1 - w1 * b0 + l0 * a1 - l1 * a0;
}

// out = v ×* f
inline void crf_vec(const double* v, const double* f, double* out) {
    const double w0 = v[0], w1 = v[1], w2 = v[2], l0 = v[3], l1 = v[4], l2 = v[5];
    const double n0 = f[0], n1 = f[1], n2 = f[2], f0 = f[3], f1 = f[4], f2 = f[5];
    out[0] = w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1;
    out[1] = w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2;
    out[2] = w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0;
    out[3] = w1 * f2 - w2 * f1;
    out[4] = w2 * f0 - w0 * f2;
    out[5] = w0 * f1 - w1 * f0;
}

inline void matvec6(const double* A, const double* x, double* out) {
    for (int r = 0; r < 6; ++r) {
        double s = 0.0;
        for (int c = 0; c < 6; ++c) s += A[r * 6 + c] * x[c];
        out[r] = s;
    }
}

// out = Aᵀ x for a 6x6 A
inline void matvec6_transposed(const double* A, const double* x, double* out) {
    for (int r = 0; r < 6; ++r) {
        double s = 0.0;
        for (int c = 0; c < 6; ++c) s += A[c * 6 + r] * x[c];
        out[r] = s;
    }
}

inline double dot6(const double* a, const double* b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

// I = [[Ic + m c× c×ᵀ, m c×], [m c×ᵀ, m 1]] about the frame origin, from the mass m, the COM c and
// the rotational inertia Ic (3x3) about the COM
inline void spatial_inertia(double m, const double* c, const double* Ic, double* I) {
    const double cx = c[0], cy = c[1], cz = c[2];
    const double cc = cx * cx + cy * cy + cz * cz;  // m c× c×ᵀ = m (|c|² 1 − c cᵀ)
    for (int r = 0; r < 3; ++r) {
        for (int s = 0; s < 3; ++s) I[r * 6 + s] = Ic[r * 3 + s] - m * c[r] * c[s];
        I[r * 6 + r] += m * cc;
    }
    I[0 * 6 + 3] = 0.0;
    I[0 * 6 + 4] = -m * cz;
    I[0 * 6 + 5] = m * cy;
    I[1 * 6 + 3] = m * cz;
    I[1 * 6 + 4] = 0.0;
    I[1 * 6 + 5] = -m * cx;
    I[2 * 6 + 3] = -m * cy;
    I[2 * 6 + 4] = m * cx;
    I[2 * 6 + 5] = 0.0;
    for (int r = 0; r < 3; ++r) {
        for (int s = 0; s < 3; ++s) {
            I[(3 + r) * 6 + s] = I[s * 6 + 3 + r];
            I[(3 + r) * 6 + 3 + s] = 0.0;
        }
        I[(3 + r) * 6 + 3 + r] = m;
    }
}

// out += (h ×̄*) for h = [n; f]
inline void add_bar_crf(const double* h, double* out) {
    const double n0 = h[0], n1 = h[1], n2 = h[2], f0 = h[3], f1 = h[4], f2 = h[5];
    out[0 * 6 + 1] += n2;
    out[0 * 6 + 2] -= n1;
    out[1 * 6 + 0] -= n2;
    out[1 * 6 + 2] += n0;
    out[2 * 6 + 0] += n1;
    out[2 * 6 + 1] -= n0;
    const int blocks[2][2] = {{0, 3}, {3, 0}};
    for (const auto& b : blocks) {
        const int o1 = b[0], o2 = b[1];
        out[(o1 + 0) * 6 + o2 + 1] += f2;
        out[(o1 + 0) * 6 + o2 + 2] -= f1;
        out[(o1 + 1) * 6 + o2 + 0] -= f2;
        out[(o1 + 1) * 6 + o2 + 2] += f0;
        out[(o1 + 2) * 6 + o2 + 0] += f1;
        out[(o1 + 2) * 6 + o2 + 1] -= f0;
    }
}

// parent += child, for 6x6 composites
inline void add_composite(double* parent, const double* child) {
    for (int k = 0; k < 36; ++k) parent[k] += child[k];
}

// out = B(v, I), eq. (10) or (9). The Christoffel form in blocks: with I = [[J, ĥ], [ĥᵀ, m 1]]
// (h = m c) and v = [ω; u], n = J ω + h × u and f = ω × h + m u (so I v = [n; f]),
//
//     B = [[½(ω̂J − Jω̂) − ½(h uᵀ + u hᵀ − 2 (u·h) 1) − ½ n̂,  0],
//          [−f̂,                                                0]]
//
// The right half vanishes: about 60 multiplications instead of 500.
inline void body_factorization(const double* v, const double* I, int kind, double* out) {
    if (kind == FEATHERSTONE) {  // crf(v) I = −crm(v)ᵀ I
        double X[36];
        crm_mat(v, X);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) {
                double s = 0.0;
                for (int k = 0; k < 6; ++k) s -= X[k * 6 + r] * I[k * 6 + c];
                out[r * 6 + c] = s;
            }
        return;
    }
    const double w0 = v[0], w1 = v[1], w2 = v[2], u0 = v[3], u1 = v[4], u2 = v[5];
    const double m = I[5 * 6 + 5];
    const double h0 = I[2 * 6 + 4], h1 = I[0 * 6 + 5], h2 = I[1 * 6 + 3];  // ĥ = I[0:3, 3:6]
    double A[9];  // ω̂ J (rows: ω × column)
    for (int c = 0; c < 3; ++c) {
        const double j0 = I[0 * 6 + c], j1 = I[1 * 6 + c], j2 = I[2 * 6 + c];
        A[0 * 3 + c] = w1 * j2 - w2 * j1;
        A[1 * 3 + c] = w2 * j0 - w0 * j2;
        A[2 * 3 + c] = w0 * j1 - w1 * j0;
    }
    const double n0 = I[0 * 6 + 0] * w0 + I[0 * 6 + 1] * w1 + I[0 * 6 + 2] * w2 + h1 * u2 - h2 * u1;
    const double n1 = I[1 * 6 + 0] * w0 + I[1 * 6 + 1] * w1 + I[1 * 6 + 2] * w2 + h2 * u0 - h0 * u2;
    const double n2 = I[2 * 6 + 0] * w0 + I[2 * 6 + 1] * w1 + I[2 * 6 + 2] * w2 + h0 * u1 - h1 * u0;
    const double f0 = w1 * h2 - w2 * h1 + m * u0;
    const double f1 = w2 * h0 - w0 * h2 + m * u1;
    const double f2 = w0 * h1 - w1 * h0 + m * u2;
    const double uh = u0 * h0 + u1 * h1 + u2 * h2;
    const double hh[3] = {h0, h1, h2}, uu[3] = {u0, u1, u2};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            // ½(ω̂J − Jω̂) = ½(A + Aᵀ) since Jω̂ = −(ω̂J)ᵀ
            out[r * 6 + c] = 0.5 * (A[r * 3 + c] + A[c * 3 + r]) - 0.5 * (hh[r] * uu[c] + uu[r] * hh[c]);
            out[r * 6 + 3 + c] = 0.0;
            out[(3 + r) * 6 + 3 + c] = 0.0;
        }
        out[r * 6 + r] += uh;
    }
    out[0 * 6 + 1] += 0.5 * n2;  // − ½ n̂
    out[0 * 6 + 2] -= 0.5 * n1;
    out[1 * 6 + 0] -= 0.5 * n2;
    out[1 * 6 + 2] += 0.5 * n0;
    out[2 * 6 + 0] += 0.5 * n1;
    out[2 * 6 + 1] -= 0.5 * n0;
    out[3 * 6 + 0] = 0.0;  // − f̂
    out[3 * 6 + 1] = f2;
    out[3 * 6 + 2] = -f1;
    out[4 * 6 + 0] = -f2;
    out[4 * 6 + 1] = 0.0;
    out[4 * 6 + 2] = f0;
    out[5 * 6 + 0] = f1;
    out[5 * 6 + 1] = -f0;
    out[5 * 6 + 2] = 0.0;
}

// out = (h ×̄*) − B: the D of Algorithm 2, line 6
inline void bar_crf_minus(const double* h, const double* B, double* out) {
    for (int k = 0; k < 36; ++k) out[k] = -B[k];
    add_bar_crf(h, out);
}

}  // namespace coriolis
