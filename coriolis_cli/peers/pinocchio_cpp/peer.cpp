// Pinocchio's C++ derivatives in a compiled loop, for `coriolis bench --peers`: the model the
// Python peer built (peers/pinocchio.py), written out joint by joint, and the same states.
//
//   peer MODEL.txt STATES.bin TENSORS.bin REPEAT
//
// MODEL.txt: one line per joint after the universe: parent, kind (RX RY RZ RUBX RUBY RUBZ PX PY PZ
// R P F S PL: Pinocchio's revolute, unbounded revolute, prismatic about an axis, unaligned revolute
// and prismatic, free flyer, spherical, planar), axis (3), placement R (9, row-major) and t (3),
// inertia mass, lever (3) and rotational inertia about the centre of mass (9), then its armature
// (nv of the joint). STATES.bin: doubles K, then K rows of q (nq), v, a and tau (nv each).
// Printed: "name median_us" for computeRNEADerivatives, computeABADerivatives and
// ComputeRNEASecondOrderDerivatives, each over REPEAT calls at every state. TENSORS.bin: the four
// second-order tensors at the first state, nv³ each, (i, j, k) at i + nv (j + nv k) (Eigen's order).
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea-second-order-derivatives.hpp>
#include <pinocchio/multibody.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

using Model = pinocchio::Model;

pinocchio::JointModel joint_of(const std::string& kind, const Eigen::Vector3d& axis) {
    if (kind == "RX") return pinocchio::JointModelRX();
    if (kind == "RY") return pinocchio::JointModelRY();
    if (kind == "RZ") return pinocchio::JointModelRZ();
    if (kind == "RUBX") return pinocchio::JointModelRUBX();
    if (kind == "RUBY") return pinocchio::JointModelRUBY();
    if (kind == "RUBZ") return pinocchio::JointModelRUBZ();
    if (kind == "PX") return pinocchio::JointModelPX();
    if (kind == "PY") return pinocchio::JointModelPY();
    if (kind == "PZ") return pinocchio::JointModelPZ();
    if (kind == "R") return pinocchio::JointModelRevoluteUnaligned(axis);
    if (kind == "P") return pinocchio::JointModelPrismaticUnaligned(axis);
    if (kind == "F") return pinocchio::JointModelFreeFlyer();
    if (kind == "S") return pinocchio::JointModelSpherical();
    if (kind == "PL") return pinocchio::JointModelPlanar();
    throw std::runtime_error("peer: joint kind " + kind + " is not one it builds");
}

bool read_model(const char* path, Model& model) {
    std::ifstream in(path);
    int parent = 0;
    std::string kind;
    while (in >> parent >> kind) {
        Eigen::Vector3d axis, t, lever;
        Eigen::Matrix3d R, I;
        double mass = 0.0;
        for (int k = 0; k < 3; ++k) in >> axis[k];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) in >> R(r, c);
        for (int k = 0; k < 3; ++k) in >> t[k];
        in >> mass;
        for (int k = 0; k < 3; ++k) in >> lever[k];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) in >> I(r, c);
        const auto id = model.addJoint(pinocchio::JointIndex(parent), joint_of(kind, axis), pinocchio::SE3(R, t),
                                       "joint" + std::to_string(model.njoints));
        model.appendBodyToJoint(id, pinocchio::Inertia(mass, lever, I), pinocchio::SE3::Identity());
        const int nv = model.joints[id].nv(), start = model.joints[id].idx_v();
        Eigen::VectorXd armature = model.armature;
        armature.conservativeResize(model.nv);
        for (int k = 0; k < nv; ++k) in >> armature[start + k];
        model.armature = armature;
        if (!in) return false;
    }
    return model.njoints > 1;
}

double median_us(const std::function<void(int)>& call, int states, int repeat) {
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r)
        for (int s = 0; s < states; ++s) {
            const auto start = std::chrono::steady_clock::now();
            call(s);
            times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
        }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: peer MODEL.txt STATES.bin TENSORS.bin REPEAT\n");
        return 2;
    }
    Model model;
    if (!read_model(argv[1], model)) {
        std::fprintf(stderr, "peer: the model file is short\n");
        return 2;
    }
    pinocchio::Data data(model);
    const int nq = model.nq, nv = model.nv, repeat = std::atoi(argv[4]);
    std::ifstream in(argv[2], std::ios::binary);
    double count = 0.0;
    in.read(reinterpret_cast<char*>(&count), sizeof(double));
    const int K = int(count);
    std::vector<Eigen::VectorXd> q(K, Eigen::VectorXd(nq)), v(K, Eigen::VectorXd(nv)), a(K, Eigen::VectorXd(nv)),
        tau(K, Eigen::VectorXd(nv));
    for (int s = 0; s < K; ++s)
        for (Eigen::VectorXd* x : {&q[s], &v[s], &a[s], &tau[s]})
            in.read(reinterpret_cast<char*>(x->data()), std::streamsize(sizeof(double) * x->size()));
    if (!in || K < 1 || repeat < 1) {
        std::fprintf(stderr, "peer: the states file is short\n");
        return 2;
    }
    pinocchio::Data::Tensor3x t1(nv, nv, nv), t2(nv, nv, nv), t3(nv, nv, nv), t4(nv, nv, nv);
    for (auto* t : {&t1, &t2, &t3, &t4}) t->setZero();
    const double first =
        median_us([&](int s) { pinocchio::computeRNEADerivatives(model, data, q[s], v[s], a[s]); }, K, repeat);
    const double fd =
        median_us([&](int s) { pinocchio::computeABADerivatives(model, data, q[s], v[s], tau[s]); }, K, repeat);
    const double second = median_us(
        [&](int s) { pinocchio::ComputeRNEASecondOrderDerivatives(model, data, q[s], v[s], a[s], t1, t2, t3, t4); },
        K, repeat);
    pinocchio::ComputeRNEASecondOrderDerivatives(model, data, q[0], v[0], a[0], t1, t2, t3, t4);
    std::ofstream out(argv[3], std::ios::binary);
    for (const auto* t : {&t1, &t2, &t3, &t4})
        out.write(reinterpret_cast<const char*>(t->data()), std::streamsize(sizeof(double) * t->size()));
    std::printf("dtau %.4f\ndqdd %.4f\nd2tau %.4f\n", first, fd, second);
    return out ? 0 : 1;
}
