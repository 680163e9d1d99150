"""Timing of the engine and its peers; results are plain records rendered by the report layer."""
