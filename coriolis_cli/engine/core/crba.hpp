// Composite-rigid-body algorithm (Featherstone ch. 6) in the computation frame: M only.
#pragma once

#include "armature.hpp"
#include "kinematics.hpp"

namespace coriolis {

// M_ij = S_iᵀ IC_j S_j for related DoF, IC accumulated from the leaves (IC is overwritten with the
// composites). The rigid bodies' M: the callers add the armature.
inline void composite_mass_matrix(const Model& model, const double* S, double* IC, double* M) {
    const int n = model.nv;
    double F2[6];
    for (int j = n - 1; j >= 0; --j) {
        const int b = model.col_body(j);
        matvec6(IC + 36 * b, S + 6 * j, F2);  // IC_b S_j, IC_b already holds the whole subtree
        M[j * n + j] = dot6(S + 6 * j, F2);
        for (int i = model.col_previous(j); i >= 0; i = model.col_previous(i)) {
            const double mij = dot6(S + 6 * i, F2);
            M[i * n + j] = mij;
            M[j * n + i] = mij;
        }
        if (model.is_first_column(j)) {
            const int p = model.parent(b);
            if (p >= 0) add_composite(IC + 36 * p, IC + 36 * b);
        }
    }
}

// M into `M` (related DoF only: the rest keeps the zeros it holds); returns a status code
inline int64_t mass_matrix(const Model& model, Data& data, const double* q, double* M) {
    const int64_t status = placements(model, data, q);
    if (failed(status)) return status;
    composite_mass_matrix(model, data.S.data(), data.IC.data(), M);
    add_armature_mass(model, data.q.data(), M);
    return status;
}

}  // namespace coriolis
