// The workspace of one caller (Pinocchio's Data, MuJoCo's mjData): every intermediate and output
// named by what it holds. Row-major; a 6x6 block is 36 doubles, a spatial vector 6.
// No Python in this file.
#pragma once

#include <vector>

#include "model.hpp"

namespace coriolis {

struct Data {
    explicit Data(const Model& model)
        : q(model.nq),
          X(36 * model.N),
          S(6 * model.nv),
          Sdot(6 * model.nv),
          v(6 * model.N),
          a(6 * model.N),
          f(6 * model.N),
          IC(36 * model.N),
          BC(36 * model.N),
          M(model.nv * model.nv),
          Mdot(model.nv * model.nv),
          C(model.nv * model.nv),
          tau(model.nv),
          g(model.nv),
          zero(model.nv),
          Xb(36 * model.N),
          w(6 * model.N),
          c(6 * model.N),
          params(10 * model.N),
          U(6 * model.nv),
          D(model.nv),
          u(model.nv),
          H(model.nv * model.nv),
          h(6 * model.N),
          f_gravity(6 * model.N),
          f_acceleration(6 * model.N),
          a_acceleration(6 * model.N),
          dVdq(6 * model.nv),
          dAdq(6 * model.nv),
          dAdv(6 * model.nv),
          dFda(6 * model.nv),
          dFdq(6 * model.nv),
          dFdv(6 * model.nv),
          dYtJ(6 * model.nv),
          dWdq(6 * model.nv),
          dFdy(6 * model.nv),
          dYv(6 * model.nv),
          BW(36 * model.N),
          d2S(6 * model.nv),
          d2V(6 * model.nv),
          d2A(6 * model.nv),
          d2Av(6 * model.nv),
          d2IC(36 * model.N),
          d2BC(36 * model.N),
          d2Bv(36 * model.N),
          d2f(6 * model.N),
          dtau_dq(model.nv * model.nv),
          dtau_dv(model.nv * model.nv),
          qdd(model.nv),
          column(model.nv) {}

    std::vector<double> q;     // nq: the configuration used (quaternions normalized)
    std::vector<double> X;     // N x 6 x 6: X[i][0:3][0:3] = R_i, X[i][3][0:3] = p_i, body i's placement
    std::vector<double> S;     // nv x 6: motion subspace columns
    std::vector<double> Sdot;  // nv x 6: Ṡ = v × S
    std::vector<double> v;     // N x 6: body velocities
    std::vector<double> a;     // N x 6: body accelerations
    std::vector<double> f;     // N x 6: body forces
    std::vector<double> IC;    // N x 6 x 6: (composite) spatial inertias
    std::vector<double> BC;    // N x 6 x 6: (composite) body-level factorizations B(v_i, I_i)
    std::vector<double> M;     // nv x nv
    std::vector<double> Mdot;  // nv x nv
    std::vector<double> C;     // nv x nv
    std::vector<double> tau;   // nv: inverse dynamics
    std::vector<double> g;     // nv: gravity vector
    std::vector<double> zero;  // nv zeros: q̇ = q̈ = 0 for g(q)

    // body coordinates (the kernels for 1-DoF joints under at most a free root)
    std::vector<double> Xb;      // N x 6 x 6: body i in its parent, Xb[i][0:3][0:3] = L (child axes), Xb[i][3][0:3] = r
    std::vector<double> w;       // N x 6: reference velocities (Slotine–Li)
    std::vector<double> c;       // N x 6: velocity-product accelerations v × S q̇ (ABA)
    std::vector<double> params;  // N x 10: composite inertias as ten parameters (CRBA in body coordinates)
    std::vector<double> U;       // nv x 6: IA S (ABA)
    std::vector<double> D;       // nv: Sᵀ IA S + armature (ABA)
    std::vector<double> u;       // nv: τ − Sᵀ pA (ABA)
    std::vector<double> H;       // nv x nv: M factored as LᵀDL (forward dynamics)

    // momentum terms (momentum.hpp)
    std::vector<double> h;               // N x 6: body momenta I_i v_i, then subtree momenta
    std::vector<double> f_gravity;       // N x 6: I_i a_0, the RNEA's gravity forces
    std::vector<double> f_acceleration;  // N x 6: I_i a^a_i, its q̈ forces
    std::vector<double> a_acceleration;  // N x 6: a^a_i = a^a_p + S_i q̈_i

    // the inverse dynamics' derivatives (rnea_derivatives.hpp), per column
    std::vector<double> dVdq;  // nv x 6: ∂v/∂q_c = v_λ × S_c
    std::vector<double> dAdq;  // nv x 6: ∂a/∂q_c
    std::vector<double> dAdv;  // nv x 6: ∂a/∂q̇_c
    std::vector<double> dFda;  // nv x 6: I S_c, composite I
    std::vector<double> dFdq;  // nv x 6: ∂f/∂q_c
    std::vector<double> dFdv;  // nv x 6: ∂f/∂q̇_c
    std::vector<double> dYtJ;  // nv x 6: İᵀ S_c, composite İ (Slotine–Li: BWᵀ S_c)

    // Slotine–Li's derivatives (slotine_li_derivatives.hpp), with the fields above
    std::vector<double> dWdq;  // nv x 6: ∂w/∂q_c = w_λ × S_c
    std::vector<double> dFdy;  // nv x 6: ∂f/∂q̇_r,c
    std::vector<double> dYv;   // nv x 6: BVᵀ S_c
    std::vector<double> BW;    // N x 6 x 6: (composite) G(w_i)

    // the second-order derivatives (rnea_second_derivatives.hpp), along one q_k at a time
    std::vector<double> d2S;   // nv x 6: ∂S_j/∂q_k
    std::vector<double> d2V;   // nv x 6: ∂(∂v/∂q_j)/∂q_k
    std::vector<double> d2A;   // nv x 6: ∂(∂a/∂q_j)/∂q_k
    std::vector<double> d2Av;  // nv x 6: ∂(∂a/∂q̇_j)/∂q_k
    std::vector<double> d2IC;  // N x 6 x 6: ∂I_X/∂q_k of the composites
    std::vector<double> d2BC;  // N x 6 x 6: ∂İ_X/∂q_k
    std::vector<double> d2Bv;  // N x 6 x 6: B(S_k, I_Z), ∂İ_X/∂q̇_k / 2
    std::vector<double> d2f;   // N x 6: ∂f_X/∂q_k

    // the forward dynamics' derivatives (forward_dynamics_derivatives.hpp)
    std::vector<double> dtau_dq;  // nv x nv: ∂τ/∂q at q̈
    std::vector<double> dtau_dv;  // nv x nv: ∂τ/∂q̇ at q̈
    std::vector<double> qdd;      // nv: q̈(q, q̇, τ)
    std::vector<double> column;   // nv: one column of M⁻¹ being solved for
};

}  // namespace coriolis
