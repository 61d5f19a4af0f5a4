"""The built-in environment families, one module each (see asyncrl.envs.family)."""
