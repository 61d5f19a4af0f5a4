"""Algorithms: the loss each one minimises, and the returns they are built on."""
