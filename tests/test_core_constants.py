"""The numbers Python shares with the compiled core are the core's: the engine reads them from the
binding, and the model, plain data that imports nothing from the engine, writes its tables with
copies held here to the core's."""

from coriolis_cli.engine import compiled, conventions
from coriolis_cli.model import joints, loops, parameters, tree


def test_the_engine_reads_the_cores_numbers():
    assert (conventions.CHRISTOFFEL, conventions.FEATHERSTONE) == (compiled.CHRISTOFFEL, compiled.FEATHERSTONE)
    assert conventions.PIVOT_SHARE == compiled.PIVOT_SHARE
    columns = (conventions.G_COL, conventions.CQD_COL, conventions.CTQD_COL, conventions.P_COL, conventions.TAU_COL)
    assert columns == compiled.TRAJECTORY_COLUMNS
    assert conventions.TRAJECTORY_QUANTITIES == compiled.TRAJECTORY_QUANTITIES == len(columns)


def test_the_models_tables_are_laid_out_as_the_core_reads_them():
    geom = (tree.G_ROT, tree.G_TRANS, tree.G_AXIS, tree.G_MASS, tree.G_COM, tree.G_INERTIA, tree.G_ROT_HAT,
            tree.G_ROT_HAT2, tree.G_PARENT_AXIS, tree.G_ARMATURE, tree.GEOM_WIDTH)
    assert geom == compiled.GEOM_COLUMNS
    codes = (joints.REVOLUTE, joints.PRISMATIC, joints.FREE, joints.SPHERICAL, joints.PLANAR, joints.FLOATING)
    assert codes == compiled.JOINT_CODES
    assert parameters.N_PARAMETERS == compiled.N_PARAMETERS
    assert loops.CLOSURE_GEOM_WIDTH == compiled.CLOSURE_GEOM_WIDTH
