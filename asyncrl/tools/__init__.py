"""Measurement harnesses, the bench and the probe, that the commands only start."""
