"""Estimation on the engine: collision observers (``observers``), inertial identification
(``identification``) and the excitation trajectories that make it well posed (``excitation``)."""
