// Derivatives of sampled signals on their own stamps (recordings.align): at each row r, the cubic
// fitted by least squares to the window of w rows around it, in offsets u = (t_j − t_r) / scale,
// evaluated at u = 0. Its d-th derivative is d! c_d / scale^d, with c = (VᵀV)⁻¹ Vᵀ x and V the
// window's Vandermonde matrix; so each row's weights are ω_j = d! (V (VᵀV)⁻¹ e_d)_j / scale^d and
// the derivative of every column is Σ_j ω_j x_j. The window is centred on r, and clamped to the
// rows [0, n) at the ends (the edge window's cubic, scipy's savgol_filter mode "interp"); on
// evenly spaced stamps the weights are the Savitzky–Golay coefficients.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace coriolis {

constexpr int FIT_COEFFICIENTS = 4;  // a cubic

// solves the 4 x 4 system G c = e_d by Gaussian elimination with partial pivoting; false if singular
inline bool solve_unit(double G[FIT_COEFFICIENTS][FIT_COEFFICIENTS], int d, double* c) {
    constexpr int m = FIT_COEFFICIENTS;
    double b[m] = {0.0, 0.0, 0.0, 0.0};
    b[d] = 1.0;
    for (int k = 0; k < m; ++k) {
        int p = k;
        for (int i = k + 1; i < m; ++i)
            if (std::fabs(G[i][k]) > std::fabs(G[p][k])) p = i;
        if (!(std::fabs(G[p][k]) > 0.0)) return false;
        if (p != k) {
            for (int j = 0; j < m; ++j) std::swap(G[k][j], G[p][j]);
            std::swap(b[k], b[p]);
        }
        for (int i = k + 1; i < m; ++i) {
            const double f = G[i][k] / G[k][k];
            for (int j = k; j < m; ++j) G[i][j] -= f * G[k][j];
            b[i] -= f * b[k];
        }
    }
    for (int k = m - 1; k >= 0; --k) {
        double s = b[k];
        for (int j = k + 1; j < m; ++j) s -= G[k][j] * c[j];
        c[k] = s / G[k][k];
    }
    return true;
}

// out ((hi − lo) x cols) = the deriv-th derivative at rows lo..hi of X (n x cols) stamped T (n);
// false if some window's stamps do not determine a cubic (fewer than 4 distinct stamps)
inline bool local_polynomial(int64_t n, int64_t cols, const double* T, const double* X, int64_t w, int deriv,
                             int64_t lo, int64_t hi, double scale, double* out) {
    std::vector<double> u(w), weight(w);
    double factor = 1.0;
    for (int k = 2; k <= deriv; ++k) factor *= k;
    factor /= std::pow(scale, deriv);
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t s = std::min(std::max<int64_t>(r - w / 2, 0), n - w);
        double moment[2 * FIT_COEFFICIENTS - 1] = {};
        for (int64_t j = 0; j < w; ++j) {
            u[j] = (T[s + j] - T[r]) / scale;
            double power = 1.0;
            for (int k = 0; k < 2 * FIT_COEFFICIENTS - 1; ++k) {
                moment[k] += power;
                power *= u[j];
            }
        }
        double G[FIT_COEFFICIENTS][FIT_COEFFICIENTS], c[FIT_COEFFICIENTS];
        for (int a = 0; a < FIT_COEFFICIENTS; ++a)
            for (int b = 0; b < FIT_COEFFICIENTS; ++b) G[a][b] = moment[a + b];
        if (!solve_unit(G, deriv, c)) return false;
        for (int64_t j = 0; j < w; ++j) weight[j] = factor * (c[0] + u[j] * (c[1] + u[j] * (c[2] + u[j] * c[3])));
        double* o = out + (r - lo) * cols;
        for (int64_t col = 0; col < cols; ++col) o[col] = 0.0;
        for (int64_t j = 0; j < w; ++j) {
            const double* x = X + (s + j) * cols;
            for (int64_t col = 0; col < cols; ++col) o[col] += weight[j] * x[col];
        }
    }
    return true;
}

}  // namespace coriolis
