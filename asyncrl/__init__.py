"""asyncrl: asynchronous methods for deep reinforcement learning (Mnih et al., 2016)."""

__version__ = "0.1.0"
