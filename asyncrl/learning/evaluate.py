"""Evaluation: the live policy during training (the evaluator process), and the pieces that
play a saved checkpoint: ``asyncrl-eval``'s face, with its arguments, outputs and video,
is ``asyncrl/commands/evaluate.py``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from asyncrl.algos import build_algorithm
from asyncrl.envs import frames_per_step, make_env
from asyncrl.learning import messages
from asyncrl.learning.child_output import route_child_output
from asyncrl.learning.process_name import EVALUATOR_NAME, name_this_process
from asyncrl.learning.rollout import Actors
from asyncrl.learning.seeding import derive_seed
from asyncrl.learning.shared import SharedState
from asyncrl.nets import build_model

EVALUATOR_SEED_KEY = 10_000


class Policy:
    """A model acting with its algorithm's evaluation policy (A3C samples pi; the
    value-based methods act epsilon-greedily with ``algo.eval_epsilon``): what evaluations,
    ``asyncrl-eval`` and ``asyncrl.load`` all act with."""

    def __init__(self, model: Any, algorithm: Any) -> None:
        self.model = model
        self.algorithm = algorithm

    def initial_state(self) -> Any:
        """A recurrent network's state at the start of an episode (None for ff)."""
        return self.model.initial_state()

    def act(self, obs: Any, state: Any) -> tuple[Any, Any]:
        """The action for one observation, and the recurrent state to pass next time: the
        training workers' acting, on a batch of one, in its evaluation mode."""
        with torch.inference_mode():
            batch = torch.as_tensor(np.asarray(obs)).unsqueeze(0)
            actions, states = self.algorithm.act(self.model, batch, [state], 0, evaluating=True)
            return actions[0], states[0]


# steps an evaluation plays between two checks of its episode's length (its buffers' size)
EVAL_SEGMENT_STEPS = 100


def evaluation_actors(cfg: Any, envs: list[gym.Env], seed: int, algorithm: Any,
                      model: Any) -> Actors:
    """``envs``, the first reset with ``seed`` and the others with seeds drawn from it, played
    by the training workers' acting loop with the evaluation policy."""
    actors = Actors(cfg, seed, algorithm, len(envs), evaluating=True, envs=envs)
    actors.allocate(model, EVAL_SEGMENT_STEPS)
    return actors


class Evaluator:
    """Plays ``eval.episodes`` with a copy of the shared policy each ``eval.interval_frames``:
    one environment per episode, all stepped together with one forward per step (as a
    worker's k environments are), so an evaluation lasts about as long as its longest
    episode rather than the sum of them."""

    def __init__(self, cfg: Any, shared: SharedState) -> None:
        self.cfg = cfg
        self.shared = shared
        envs = [make_env(cfg.env, evaluation=True) for _ in range(max(1, cfg.eval.episodes))]
        seed = derive_seed(cfg.seed, EVALUATOR_SEED_KEY, shared.base_frames)
        self.algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(seed))
        self.model = build_model(cfg, envs[0].observation_space, envs[0].action_space,
                                 self.algorithm.head)
        self.actors = evaluation_actors(cfg, envs, seed, self.algorithm, self.model)
        self.max_steps = max_eval_steps(cfg)
        self.interval = cfg.eval.interval_frames
        self.next_at = self._boundary_after(shared.total_frames())

    def _boundary_after(self, frames: int) -> int:
        return (frames // self.interval + 1) * self.interval

    def due(self, frames: int) -> bool:
        return self.cfg.eval.episodes > 0 and frames >= self.next_at

    def run(self, frames: int) -> messages.Evaluation | None:
        """Evaluate now; returns the EVAL message, or None if stopped before any episode."""
        self.next_at = self._boundary_after(frames)
        self.model.load_state_dict(self.shared.model.state_dict())
        if self.shared.stopping():
            return None
        played = self.actors.play_episodes(self.model, self.max_steps)
        return messages.Evaluation(frames, self.shared.wall_time(), [p.score for p in played])

    def close(self) -> None:
        """Release the environments (TORCS: their race processes and directories)."""
        self.actors.close()


def evaluator_process(cfg: Any, shared: SharedState, outbox: Any,
                      output_file: str | None = None) -> None:
    """Entry point of the evaluator process; it runs beside the workers at a lower priority."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    name_this_process(EVALUATOR_NAME)
    route_child_output(outbox, "evaluator", output_file)
    torch.set_num_threads(1)
    with contextlib.suppress(OSError):
        os.nice(5)  # training comes first on a machine with as many workers as cores
    evaluator = Evaluator(cfg, shared)
    parent = os.getppid()
    try:
        while not shared.stopping() and os.getppid() == parent:  # a killed launcher ends us
            frames = shared.total_frames()
            if frames >= cfg.total_frames:
                break
            if not evaluator.due(frames):
                time.sleep(0.2)
                continue
            message = evaluator.run(frames)
            if message is not None:
                outbox.put(message)
    finally:
        evaluator.close()


def eval_policy(cfg: Any, model: nn.Module, seed: int) -> Policy:
    """``model`` acting as evaluations do, its random choices drawn from ``seed``."""
    return Policy(model, build_algorithm(cfg.algo, torch.Generator().manual_seed(seed)))


def max_eval_steps(cfg: Any) -> int:
    """Agent steps in an evaluation episode of ``cfg``'s environment at most."""
    return max(1, cfg.eval.max_episode_frames // frames_per_step(cfg.env))
