// The robot as the kernels read it (Pinocchio's Model): three flat arrays, built once in Python
// by model/tree.py (ModelArrays) and copied here. No Python in this file.
//
//   ints (N x 4): parent (-1: the world), joint code, first q index, first v index
//   cols (nv x 3): body of each velocity column, previous column toward the root (-1 at the
//                  root), unit-column index (S_j = e_u in the computation frame, else -1)
//   geom (N x GEOM_WIDTH): joint placement, inertia and armature at the G_* offsets below
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace coriolis {

// joint codes (model/joints.py)
enum JointCode : int64_t { REVOLUTE = 0, PRISMATIC = 1, FREE = 2, SPHERICAL = 3, PLANAR = 4, FLOATING = 5 };

// column offsets of geom (model/tree.py)
constexpr int G_ROT = 0, G_TRANS = 9, G_AXIS = 12, G_MASS = 15, G_COM = 16, G_INERTIA = 19, G_ROT_HAT = 28,
              G_ROT_HAT2 = 37, G_PARENT_AXIS = 46, G_ARMATURE = 49, GEOM_WIDTH = 55;

struct Model {
    int N = 0, nv = 0, nq = 0;
    std::vector<int64_t> ints;  // N x 4
    std::vector<int64_t> cols;  // nv x 3
    std::vector<double> geom;   // N x GEOM_WIDTH
    // 1-DoF joints under at most a free root: M, τ, g, q̈ and Slotine–Li run in body coordinates
    // (engine.hpp chooses)
    bool body_frame = false;
    // one past the last column of each column's subtree (its body's later columns and the
    // bodies below), filled from the tables: the columns in [j, col_end[j]) descend from j
    std::vector<int> col_end;
    // one past the last body of each body's subtree: the bodies in [b, body_end[b]) descend from b
    std::vector<int> body_end;

    int parent(int i) const { return int(ints[4 * i]); }
    int64_t joint(int i) const { return ints[4 * i + 1]; }
    int q_start(int i) const { return int(ints[4 * i + 2]); }
    int v_start(int i) const { return int(ints[4 * i + 3]); }
    int col_body(int j) const { return int(cols[3 * j]); }
    int col_previous(int j) const { return int(cols[3 * j + 1]); }
    int col_unit(int j) const { return int(cols[3 * j + 2]); }
    const double* body_geom(int i) const { return geom.data() + GEOM_WIDTH * i; }

    // the bytes a model of N bodies and nv columns holds (the memory estimate), and this one's
    static std::size_t bytes_for(std::size_t N, std::size_t nv) {
        return (4 * N + 3 * nv) * sizeof(int64_t) + GEOM_WIDTH * N * sizeof(double) + (nv + N) * sizeof(int);
    }
    std::size_t bytes() const {
        return (ints.capacity() + cols.capacity()) * sizeof(int64_t) + geom.capacity() * sizeof(double) +
               (col_end.capacity() + body_end.capacity()) * sizeof(int);
    }

    // true for a body's first column, seen from the leaves: where its composites go to its parent
    bool is_first_column(int j) const {
        int prev = col_previous(j);
        return prev < 0 || col_body(prev) != col_body(j);
    }
};

}  // namespace coriolis
