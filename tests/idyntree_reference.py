"""iDynTree as a reference, run in a process of its own: the free-floating mass matrix and the
bias forces (C ν + g) of a URDF in one base velocity representation. Reads a JSON request on stdin,
writes a JSON answer on stdout.

A process of its own because importing iDynTree into a process that has run numba kernels hung
(seen once, not investigated); the two never share a process this way.
"""

import json
import sys

import idyntree.bindings as idt
import numpy as np

args = json.loads(sys.stdin.read())
loader = idt.ModelLoader()
assert loader.loadReducedModelFromFile(args["urdf"], args["joints"])
kd = idt.KinDynComputations()
kd.loadRobotModel(loader.model())
kd.setFloatingBase(args["base"])
rep = {"body": idt.BODY_FIXED_REPRESENTATION, "mixed": idt.MIXED_REPRESENTATION, "inertial": idt.INERTIAL_FIXED_REPRESENTATION}
kd.setFrameVelocityRepresentation(rep[args["representation"]])
model = kd.model()
names = [model.getJointName(i) for i in range(model.getNrOfJoints())]
H = idt.Transform.Identity()
H.fromHomogeneousTransform(idt.Matrix4x4(np.array(args["H"])))
s = idt.VectorDynSize.FromPython([args["s"][n] for n in names])
ds = idt.VectorDynSize.FromPython([args["ds"][n] for n in names])
nu = idt.Twist.FromPython(np.array(args["base_velocity"]))
g = idt.Vector3.FromPython(np.array(args["gravity"]))
kd.setRobotState(H, s, nu, ds, g)
M = idt.FreeFloatingMassMatrix(model)
kd.getFreeFloatingMassMatrix(M)
bias = idt.FreeFloatingGeneralizedTorques(model)
kd.generalizedBiasForces(bias)
print(json.dumps({"names": names, "M": M.toNumPy().tolist(),
                  "bias": bias.baseWrench().toNumPy().tolist() + bias.jointTorques().toNumPy().tolist()}))
