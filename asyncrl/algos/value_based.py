"""The asynchronous value-based methods (paper, Algorithm 1, one-step Sarsa, Algorithm S2).

All three act epsilon-greedily on Q(s, .; theta') with the worker's own epsilon, minimise
sum_i (y_i - Q(s_i, a_i; theta'))^2 over a segment, and take every bootstrap value from the
shared target network theta^-. They differ only in y_i:

    one_step_q:      r_i + gamma * max_a Q(s_{i+1}, a; theta^-)
    one_step_sarsa:  r_i + gamma * Q(s_{i+1}, a_{i+1}; theta^-), a_{i+1} the action taken next
    nstep_q:         the longest n-step return, bootstrapped with max_a Q(s_{t+n}, a; theta^-)

The one-step methods accumulate gradients over I_AsyncUpdate steps; in this code that is the
segment length, so all three share the worker loop of A3C.

With ``network=lstm`` the target network reads the segment from the online network's
recurrent state at the segment's start (the "stored state" of recurrent replay agents):
tracking a second state through every acting step would double the cost of acting.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from asyncrl.algos.exploration import annealed_epsilon, draw_final_epsilon, epsilon_greedy
from asyncrl.algos.q_targets import nstep_q_targets, one_step_targets
from asyncrl.algos.segment import SegmentBatch
from asyncrl.nets import LSTMState


def target_q_after(target: Any, batch: SegmentBatch, first: int) -> torch.Tensor:
    """Q(s_j, .; theta^-) for j = first .. n, without gradient."""
    with torch.no_grad():
        if target.recurrent:
            q, _ = target(batch.obs[: batch.steps + 1], batch.start_state)
            return q[first:]
        q, _ = target(batch.obs[first : batch.steps + 1])
        return q


class ValueBased:
    """Acting and the shared parts of the loss; subclasses say what the targets are."""

    uses_target = True
    needs_next_action = False
    metrics = ("loss", "q_mean", "epsilon")

    def __init__(self, algo_cfg: Any, generator: torch.Generator) -> None:
        self.cfg = algo_cfg
        self.generator = generator
        self.segment_steps = int(self.steps_per_update(algo_cfg))
        seed = int(torch.randint(2**31 - 1, (), generator=generator))
        self.final_epsilon = draw_final_epsilon(np.random.default_rng(seed),
                                                list(algo_cfg.epsilon_finals),
                                                list(algo_cfg.epsilon_probabilities))
        self.epsilon_now = 1.0

    @staticmethod
    def steps_per_update(algo_cfg: Any) -> int:
        return int(algo_cfg.async_update)

    def describe(self) -> str:
        return (f"final epsilon {self.final_epsilon} (annealed from 1 over "
                f"{self.cfg.epsilon_anneal_frames:,} frames), {self.segment_steps} steps "
                f"per update, target network every {self.cfg.target_update_frames:,} frames")

    def epsilon(self, frames: int) -> float:
        return annealed_epsilon(self.final_epsilon, frames, self.cfg.epsilon_anneal_frames)

    def act(self, model: Any, obs: torch.Tensor, state: LSTMState | None,
            frames: int) -> tuple[int, LSTMState | None]:
        q, state = model(obs, state)
        self.epsilon_now = self.epsilon(frames)
        return epsilon_greedy(q[0], self.epsilon_now, self.generator), state

    def eval_act(self, model: Any, obs: torch.Tensor, state: LSTMState | None,
                 frames: int) -> tuple[int, LSTMState | None]:
        q, state = model(obs, state)
        return epsilon_greedy(q[0], self.cfg.eval_epsilon, self.generator), state

    def targets(self, target: Any, batch: SegmentBatch) -> torch.Tensor:
        raise NotImplementedError

    def loss(self, model: Any, target: Any, batch: SegmentBatch
             ) -> tuple[torch.Tensor, dict[str, float]]:
        steps = batch.steps
        q, _ = model(batch.obs[:steps], batch.start_state)
        taken = q.gather(1, batch.actions[:steps].unsqueeze(1)).squeeze(1)
        y = self.targets(target, batch)
        loss = (y - taken).pow(2).sum()
        return loss, {"loss": loss.item(), "q_mean": float(taken.detach().mean()),
                      "epsilon": self.epsilon_now}


class OneStepQ(ValueBased):
    def targets(self, target: Any, batch: SegmentBatch) -> torch.Tensor:
        next_max = target_q_after(target, batch, first=1).max(-1).values
        return one_step_targets(batch.rewards, batch.terminals, next_max, self.cfg.gamma)


class OneStepSarsa(ValueBased):
    needs_next_action = True

    def targets(self, target: Any, batch: SegmentBatch) -> torch.Tensor:
        steps = batch.steps
        # a' for the last step is the one the next segment starts with (0 after a terminal,
        # where it is never used)
        following = batch.next_action if batch.next_action is not None else 0
        next_actions = torch.cat([batch.actions[1:steps],
                                  torch.tensor([following], dtype=torch.int64)])
        next_q = target_q_after(target, batch, first=1)
        chosen = next_q.gather(1, next_actions.unsqueeze(1)).squeeze(1)
        return one_step_targets(batch.rewards, batch.terminals, chosen, self.cfg.gamma)


class NStepQ(ValueBased):
    @staticmethod
    def steps_per_update(algo_cfg: Any) -> int:
        return int(algo_cfg.t_max)

    def targets(self, target: Any, batch: SegmentBatch) -> torch.Tensor:
        if batch.terminals[-1]:
            bootstrap = torch.zeros(1)
        else:
            bootstrap = target_q_after(target, batch, first=batch.steps)[-1]
        return nstep_q_targets(batch.rewards, batch.terminals, bootstrap, self.cfg.gamma)
