"""jaxsim as a peer of coriolis_cli.jax in ``coriolis bench --jax``: M, the bias h = C q̇ + g and τ of
the same robot (the URDF ``to_urdf`` writes for it, gravity as ours), in our coordinates, DoF
order and body-fixed base velocity. jaxsim reads URDF through ROD, which converts it with the
system's ``gz sdf``/``ign sdf``; a fixed base is a world link joined to the robot's root. jaxsim
takes the base quaternion as (w, x, y, z) and does not normalize it: ours is normalized first, as
our kernels do."""

from __future__ import annotations

import importlib
import logging
import os
import re

import numpy as np

from ..model.tree import RobotModel
from ..model.urdf import to_urdf


def available(framework: str = "jax") -> bool:
    # ROD asks for SDFormat 1.10; Debian's and Ubuntu's sdformat 12 write 1.9, which reads the same here
    os.environ.setdefault("ROD_SKIP_SDFORMAT_CHECK", "1")
    try:
        importlib.import_module("jaxsim.api")
    except Exception:  # noqa: BLE001 - any import failure means the peer is absent
        return False
    return True


def _urdf(robot: RobotModel) -> str:
    text = to_urdf(robot.description)
    if robot.floating_base:
        return text
    return re.sub(r"(<robot[^>]*>)", rf'\1\n  <link name="world"/>\n  <joint name="coriolis_world" type="fixed">'
                  rf'<parent link="world"/><child link="{robot.base_link}"/></joint>', text, count=1)


def functions(robot: RobotModel, gravity) -> dict:
    """{"M": M(q), "bias": h(q, v), "tau": τ(q, v, a)} on one state (jaxsim's functions take one;
    vmap maps them)."""
    available()
    logging.getLogger("jaxsim").setLevel(logging.ERROR)
    import jax.numpy as jnp
    import jaxsim.api as js
    from jaxsim import VelRepr

    if np.any(np.asarray(gravity)[:2] != 0):
        raise ValueError("jaxsim takes gravity along z only")
    model = js.model.JaxSimModel.build_from_model_description(_urdf(robot), gravity=-float(gravity[2]))
    base = 6 if robot.floating_base else 0
    names = list(robot.dof_names[base:])
    order = np.array([names.index(n) for n in model.joint_names()])  # jaxsim's joint k is our joint order[k]
    back = np.argsort(order)
    full = np.concatenate([np.arange(base), base + back]) if base else back  # jaxsim's ν in our order

    def state(q, v=None):
        joints = q[base + 1:] if base else q
        options = dict(joint_positions=joints[order], velocity_representation=VelRepr.Body)
        if v is not None:
            options["joint_velocities"] = v[base:][order]
        if base:
            quaternion = q[3:7] / jnp.linalg.norm(q[3:7])
            options.update(base_position=q[:3], base_quaternion=quaternion[jnp.array([3, 0, 1, 2])])
            if v is not None:
                options.update(base_linear_velocity=v[:3], base_angular_velocity=v[3:6])
        return js.data.JaxSimModelData.build(model=model, **options)

    def M(q):
        mass = js.model.free_floating_mass_matrix(model, state(q))
        return mass[full][:, full] if base else mass[6:, 6:][back][:, back]

    def bias(q, v):
        h = js.model.free_floating_bias_forces(model, state(q, v))
        return h[full] if base else h[6:][back]

    def tau(q, v, a):
        options = dict(joint_accelerations=a[base:][order])
        if base:
            options["base_acceleration"] = a[:6]
        f_base, t_joints = js.model.inverse_dynamics(model, state(q, v), **options)
        return jnp.concatenate([f_base, t_joints[back]]) if base else t_joints[back]

    return {"M": M, "bias": bias, "tau": tau}
