// The workspace of one caller (Pinocchio's Data, MuJoCo's mjData): every intermediate and output
// named by what it holds. Row-major; a 6x6 block is 36 doubles, a spatial vector 6.
// No Python in this file.
#pragma once

#include <cstddef>
#include <vector>

#include "model.hpp"

namespace coriolis {

// Every field of the workspace, once (as MuJoCo's mjxmacro.h lists mjData's): its name and its
// length in doubles, a·nq + b·N + c·nv + d·nv². The struct, its allocation and its size, which
// Python's memory estimate reads from the binding, are all made from this table.
// clang-format off
#define CORIOLIS_DATA_FIELDS(FIELD) \
    FIELD(q, 1, 0, 0, 0) /* nq: the configuration used (quaternions normalized) */                                    \
    FIELD(X, 0, 36, 0, 0) /* N x 6 x 6: X[i][0:3][0:3] = R_i, X[i][3][0:3] = p_i, body i's placement */               \
    FIELD(S, 0, 0, 6, 0) /* nv x 6: motion subspace columns */                                                        \
    FIELD(Sdot, 0, 0, 6, 0) /* nv x 6: Ṡ = v × S */                                                                   \
    FIELD(v, 0, 6, 0, 0) /* N x 6: body velocities */                                                                 \
    FIELD(a, 0, 6, 0, 0) /* N x 6: body accelerations */                                                              \
    FIELD(f, 0, 6, 0, 0) /* N x 6: body forces */                                                                     \
    FIELD(IC, 0, 36, 0, 0) /* N x 6 x 6: (composite) spatial inertias */                                              \
    FIELD(BC, 0, 36, 0, 0) /* N x 6 x 6: (composite) body-level factorizations B(v_i, I_i) */                         \
    FIELD(M, 0, 0, 0, 1) /* nv x nv */                                                                                \
    FIELD(Mdot, 0, 0, 0, 1) /* nv x nv */                                                                             \
    FIELD(C, 0, 0, 0, 1) /* nv x nv */                                                                                \
    FIELD(tau, 0, 0, 1, 0) /* nv: inverse dynamics */                                                                 \
    FIELD(g, 0, 0, 1, 0) /* nv: gravity vector */                                                                     \
    FIELD(zero, 0, 0, 1, 0) /* nv zeros: q̇ = q̈ = 0 for g(q) */                                                      \
                                                                                                                      \
    /* body coordinates (the kernels for 1-DoF joints under at most a free root) */                                   \
    FIELD(Xb, 0, 36, 0, 0) /* N x 6 x 6: body i in its parent, Xb[i][0:3][0:3] = L (child axes), Xb[i][3][0:3] = r */ \
    FIELD(w, 0, 6, 0, 0) /* N x 6: reference velocities (Slotine–Li) */                                               \
    FIELD(c, 0, 6, 0, 0) /* N x 6: velocity-product accelerations v × S q̇ (ABA) */                                   \
    FIELD(params, 0, 10, 0, 0) /* N x 10: composite inertias as ten parameters (CRBA in body coordinates) */          \
    FIELD(U, 0, 0, 6, 0) /* nv x 6: IA S (ABA) */                                                                     \
    FIELD(D, 0, 0, 1, 0) /* nv: Sᵀ IA S + armature (ABA) */                                                           \
    FIELD(u, 0, 0, 1, 0) /* nv: τ − Sᵀ pA (ABA) */                                                                    \
    FIELD(H, 0, 0, 0, 1) /* nv x nv: M factored as LᵀDL (forward dynamics) */                                         \
                                                                                                                      \
    /* momentum terms (momentum.hpp) */                                                                               \
    FIELD(h, 0, 6, 0, 0) /* N x 6: body momenta I_i v_i, then subtree momenta */                                      \
    FIELD(f_gravity, 0, 6, 0, 0) /* N x 6: I_i a_0, the RNEA's gravity forces */                                      \
    FIELD(f_acceleration, 0, 6, 0, 0) /* N x 6: I_i a^a_i, its q̈ forces */                                           \
    FIELD(a_acceleration, 0, 6, 0, 0) /* N x 6: a^a_i = a^a_p + S_i q̈_i */                                           \
                                                                                                                      \
    /* the inverse dynamics' derivatives (rnea_derivatives.hpp), per column */                                        \
    FIELD(dVdq, 0, 0, 6, 0) /* nv x 6: ∂v/∂q_c = v_λ × S_c */                                                         \
    FIELD(dAdq, 0, 0, 6, 0) /* nv x 6: ∂a/∂q_c */                                                                     \
    FIELD(dAdv, 0, 0, 6, 0) /* nv x 6: ∂a/∂q̇_c */                                                                    \
    FIELD(dFda, 0, 0, 6, 0) /* nv x 6: I S_c, composite I */                                                          \
    FIELD(dFdq, 0, 0, 6, 0) /* nv x 6: ∂f/∂q_c */                                                                     \
    FIELD(dFdv, 0, 0, 6, 0) /* nv x 6: ∂f/∂q̇_c */                                                                    \
    FIELD(dYtJ, 0, 0, 6, 0) /* nv x 6: İᵀ S_c, composite İ (Slotine–Li: BWᵀ S_c) */                                   \
                                                                                                                      \
    /* Slotine–Li's derivatives (slotine_li_derivatives.hpp), with the fields above */                                \
    FIELD(dWdq, 0, 0, 6, 0) /* nv x 6: ∂w/∂q_c = w_λ × S_c */                                                         \
    FIELD(dFdy, 0, 0, 6, 0) /* nv x 6: ∂f/∂q̇_r,c */                                                                  \
    FIELD(dYv, 0, 0, 6, 0) /* nv x 6: BVᵀ S_c */                                                                      \
    FIELD(BW, 0, 36, 0, 0) /* N x 6 x 6: (composite) G(w_i) */                                                        \
                                                                                                                      \
    /* the second-order derivatives (rnea_second_derivatives.hpp), along one q_k at a time */                         \
    FIELD(d2S, 0, 0, 6, 0) /* nv x 6: ∂S_j/∂q_k */                                                                    \
    FIELD(d2V, 0, 0, 6, 0) /* nv x 6: ∂(∂v/∂q_j)/∂q_k */                                                              \
    FIELD(d2A, 0, 0, 6, 0) /* nv x 6: ∂(∂a/∂q_j)/∂q_k */                                                              \
    FIELD(d2Av, 0, 0, 6, 0) /* nv x 6: ∂(∂a/∂q̇_j)/∂q_k */                                                            \
    FIELD(d2IC, 0, 36, 0, 0) /* N x 6 x 6: ∂I_X/∂q_k of the composites */                                             \
    FIELD(d2BC, 0, 36, 0, 0) /* N x 6 x 6: ∂İ_X/∂q_k */                                                               \
    FIELD(d2Bv, 0, 36, 0, 0) /* N x 6 x 6: B(S_k, I_Z), ∂İ_X/∂q̇_k / 2 */                                             \
    FIELD(d2f, 0, 6, 0, 0) /* N x 6: ∂f_X/∂q_k */                                                                     \
    FIELD(d2Lam, 0, 48, 0, 0) /* N x 8 x 6: λ-weighted sums of S over X's joint, above it; ∂/∂q_k; products */        \
    FIELD(d2Pre, 0, 0, 30, 0) /* nv x 5 x 6: contracted: a column's factors that do not move with q_k */               \
    FIELD(d2W, 0, 60, 0, 0) /* N x 2 x 5 x 6: λ-weighted row factors at X, and summed below X */                      \
                                                                                                                      \
    /* the forward dynamics' derivatives (forward_dynamics_derivatives.hpp) */                                        \
    FIELD(dtau_dq, 0, 0, 0, 1) /* nv x nv: ∂τ/∂q at q̈ */                                                             \
    FIELD(dtau_dv, 0, 0, 0, 1) /* nv x nv: ∂τ/∂q̇ at q̈ */                                                            \
    FIELD(qdd, 0, 0, 1, 0) /* nv: q̈(q, q̇, τ) */                                                                     \
    FIELD(column, 0, 0, 1, 0) /* nv: one column of M⁻¹ being solved for */                                          \
                                                                                                                      \
    /* their second order contracted (forward_dynamics_second_derivatives.hpp) */                                     \
    FIELD(fd2_dq, 0, 0, 0, 1) /* nv x nv: ∂q̈/∂q */                                                                   \
    FIELD(fd2_dv, 0, 0, 0, 1) /* nv x nv: ∂q̈/∂q̇ */                                                                  \
    FIELD(fd2_Minv, 0, 0, 0, 1) /* nv x nv: M⁻¹ */                                                                    \
    FIELD(fd2_Xqa, 0, 0, 0, 1) /* nv x nv: μᵀ∂²τ/∂q∂q̈, μ = M⁻¹λ */                                                  \
    FIELD(fd2_product, 0, 0, 0, 1) /* nv x nv: X_qa times a first derivative */                                      \
    FIELD(fd2_mu, 0, 0, 1, 0) /* nv: μ = M⁻¹λ */                                                                      \
    FIELD(fd2_qdd, 0, 0, 1, 0) /* nv: q̈, kept while the second order reuses the workspace */
// clang-format on

struct Data {
#define CORIOLIS_DECLARE_FIELD(name, a, b, c, d) std::vector<double> name;
    CORIOLIS_DATA_FIELDS(CORIOLIS_DECLARE_FIELD)
#undef CORIOLIS_DECLARE_FIELD

    explicit Data(const Model& model) {
#define CORIOLIS_ALLOCATE_FIELD(name, a, b, c, d) name.assign(length(model.nq, model.N, model.nv, a, b, c, d), 0.0);
        CORIOLIS_DATA_FIELDS(CORIOLIS_ALLOCATE_FIELD)
#undef CORIOLIS_ALLOCATE_FIELD
    }

    // the doubles a workspace of these sizes holds, before it is made (the memory estimate)
    static std::size_t doubles(std::size_t nq, std::size_t N, std::size_t nv) {
        std::size_t total = 0;
#define CORIOLIS_COUNT_FIELD(name, a, b, c, d) total += length(nq, N, nv, a, b, c, d);
        CORIOLIS_DATA_FIELDS(CORIOLIS_COUNT_FIELD)
#undef CORIOLIS_COUNT_FIELD
        return total;
    }

    // the bytes this workspace really holds
    std::size_t bytes() const {
        std::size_t total = 0;
#define CORIOLIS_BYTES_OF_FIELD(name, a, b, c, d) total += name.capacity() * sizeof(double);
        CORIOLIS_DATA_FIELDS(CORIOLIS_BYTES_OF_FIELD)
#undef CORIOLIS_BYTES_OF_FIELD
        return total;
    }

private:
    static std::size_t length(std::size_t nq, std::size_t N, std::size_t nv, std::size_t a, std::size_t b,
                              std::size_t c, std::size_t d) {
        return a * nq + b * N + c * nv + d * nv * nv;
    }
};

}  // namespace coriolis
