"""Rendering of result records: rich tables, JSON, CSV, NPZ, plots, and safe file output."""
