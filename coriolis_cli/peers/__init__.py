"""Independent references: Pinocchio (external oracle and timing peer), finite differences of M,
and the Safeea recursion. None of them shares code with the engine's algorithms."""
