"""MuJoCo tasks from their physical state (joint positions, velocities, targets)."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.wrappers import ClipAction

from asyncrl.envs.gym_wrappers import VectorState


def make_mujoco(env_id: str, max_episode_steps: int | None = None,
                render_mode: str | None = None) -> gym.Env:
    """The gymnasium task with float32 observations, clipping actions to its bounds.

    The clip sits in the environment so the policy's unclipped sample is what the rollout
    stores and the loss scores (clipping inside the loss would bias the log-probability).
    """
    return VectorState(ClipAction(gym.make(env_id, max_episode_steps=max_episode_steps,
                                           render_mode=render_mode)))
