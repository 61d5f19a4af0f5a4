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

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from asyncrl.algos.configs import (
    NStepQConfig,
    OneStepQConfig,
    OneStepSarsaConfig,
    ValueBasedConfig,
)
from asyncrl.algos.exploration import annealed_epsilon, draw_final_epsilon, epsilon_greedy
from asyncrl.algos.q_targets import (
    lambda_q_targets,
    nstep_q_targets,
    one_step_targets,
    state_values,
)
from asyncrl.algos.segment import (
    SegmentBatch,
    join,
    last_conv_maps,
    live_units,
    segment_outputs,
)
from asyncrl.nets import LSTMState


def target_q_many(target: Any, batches: Sequence[SegmentBatch],
                  firsts: Sequence[int]) -> list[torch.Tensor]:
    """Q(s_j, .; theta^-) for j = firsts[i] .. n of each segment i, without gradient (empty
    where firsts[i] is past n)."""
    # a segment that needs no row (n-step Q after a terminal) costs no forward
    needed = [i for i, (b, first) in enumerate(zip(batches, firsts, strict=True))
              if first <= b.steps]
    out = [torch.empty(0) for _ in batches]
    if not needed:
        return out
    chosen = [batches[i] for i in needed]
    with torch.no_grad():
        if target.recurrent:
            outputs = segment_outputs(target, chosen, [slice(0, b.steps + 1) for b in chosen])
            for i, (q,) in zip(needed, outputs, strict=True):
                out[i] = q[firsts[i]:]
        else:
            rows = [slice(firsts[i], batches[i].steps + 1) for i in needed]
            for i, (q,) in zip(needed, segment_outputs(target, chosen, rows), strict=True):
                out[i] = q
    return out


def q_spread(outputs: Sequence[tuple[torch.Tensor]]) -> dict[str, float]:
    """How much Q(s, a) differs across every state the update read: each action's standard
    deviation over the states, averaged over the actions."""
    q = join([segment_q.detach() for (segment_q,) in outputs])
    return {"q_spread": float(q.std(dim=0, correction=0).mean())}


class ValueBased:
    """Acting and the shared parts of the loss; subclasses say what the targets are."""

    config: type[ValueBasedConfig] = ValueBasedConfig
    head = "q"  # the network it learns: one Q-value per action (nets.build_model)
    uses_target = True
    needs_next_action = False
    # q_spread: how much Q(s, .) differs across the update's states, 0 once the network no
    # longer reads its input (asyncrl/run/blindness.py)
    metrics = ("loss", "q_mean", "epsilon", "q_spread", "live_units")
    summed_metrics = ("loss",)  # a sum over the update's rows (worker.merged_stats)

    def __init__(self, algo_cfg: Any, generator: torch.Generator,
                 exploration_seed: int | None = None, environments: int = 1) -> None:
        self.cfg = algo_cfg
        self.generator = generator
        self.segment_steps = int(self.steps_per_update(algo_cfg))
        # a worker passes its slot's seed, so that a restart or a resume of the run keeps the
        # slot's final epsilon instead of drawing another (a resumed run is the same run)
        seed = (int(torch.randint(2**31 - 1, (), generator=generator))
                if exploration_seed is None else exploration_seed)
        # with epsilon_per_environment (or epsilon_redraw) each of the worker's k environments
        # draws, as each of the paper's threads does; the first keeps the worker's draw, so
        # k = 1 is unchanged
        self.redraw = bool(algo_cfg.epsilon_redraw)
        draws = environments if algo_cfg.epsilon_per_environment or self.redraw else 1
        self.exploration_seed = seed
        self.epsilon_choices = (list(algo_cfg.epsilon_finals),
                                list(algo_cfg.epsilon_probabilities))
        self.final_epsilons = [self._draw(i, 0) for i in range(draws)]
        self.episodes_begun = [0] * draws  # each environment's episodes after its first
        self.epsilon_now = 1.0
        # double Q reads the online network on the states after each step too: one more row
        self.double_q = bool(algo_cfg.double_q)

    def _draw(self, environment: int, episode: int) -> float:
        """The final epsilon of ``environment``'s ``episode``-th redraw (0: its first draw),
        from its own stream: the same seed gives the same draws, whatever the others do."""
        key = (self.exploration_seed if environment == 0 and episode == 0
               else [self.exploration_seed, environment] if episode == 0
               else [self.exploration_seed, environment, episode])
        return draw_final_epsilon(np.random.default_rng(key), *self.epsilon_choices)

    def episode_began(self, environment: int) -> None:
        """``environment`` begins its next episode: with ``epsilon_redraw`` it draws its final
        epsilon again (the paper: "epsilon periodically sampled from some distribution by
        each thread"; here, at each episode), and keeps it otherwise."""
        if self.redraw:
            self.episodes_begun[environment] += 1
            self.final_epsilons[environment] = self._draw(environment,
                                                          self.episodes_begun[environment])

    @staticmethod
    def steps_per_update(algo_cfg: Any) -> int:
        return int(algo_cfg.async_update)

    @classmethod
    def blindness_spreads(cls, algo_cfg: Any, segments: int) -> tuple[str, ...]:
        """What the blindness watch reads: q_spread, where an optimizer step that learns
        from ``segments`` new segments reads two states or more (a spread over one state is
        0 on any network), else nothing."""
        rows = cls.steps_per_update(algo_cfg) + int(bool(algo_cfg.double_q))
        read = segments * (1 + int(algo_cfg.replay_ratio))
        return ("q_spread",) if rows * read >= 2 else ()

    @property
    def final_epsilon(self) -> float:
        """The worker's own draw (its first environment's)."""
        return self.final_epsilons[0]

    def describe(self) -> str:
        finals = (f"final epsilon {self.final_epsilon}" if len(self.final_epsilons) == 1
                  else "final epsilons per environment "
                  + " ".join(str(e) for e in self.final_epsilons))
        if self.redraw:
            finals += ", drawn again as each episode begins"
        return (f"{finals} (annealed from 1 over "
                f"{self.cfg.epsilon_anneal_frames:,} frames), {self.segment_steps} steps "
                f"per update, target network every {self.cfg.target_update_frames:,} frames"
                f"{', double Q' if self.double_q else ''}")

    def epsilon(self, frames: int, environment: int = 0) -> float:
        return annealed_epsilon(self.final_epsilons[environment], frames,
                                self.cfg.epsilon_anneal_frames)

    def act(self, model: Any, obs: torch.Tensor, states: list[LSTMState | None],
            frames: int, evaluating: bool = False, members: Sequence[int] | None = None
            ) -> tuple[list[int], list[LSTMState | None]]:
        """Epsilon-greedy actions for k environments from one forward (``obs`` is (k, ...));
        row j is the worker's environment ``members[j]`` (row j where not given), at that
        environment's epsilon, or at ``eval_epsilon`` in an evaluation."""
        (q,), states = model.step_many(obs, states)
        if evaluating:
            epsilon = self.cfg.eval_epsilon
        elif len(self.final_epsilons) == 1:
            epsilon = self.epsilon_now = self.epsilon(frames)
        else:
            who = range(len(q)) if members is None else members
            epsilons = [self.epsilon(frames, i) for i in range(len(self.final_epsilons))]
            # what updates.csv logs: the mean over every environment, acting now or not
            self.epsilon_now = float(np.mean(epsilons))
            return [epsilon_greedy(row, epsilons[member], self.generator)
                    for row, member in zip(q, who, strict=True)], states
        return [epsilon_greedy(row, epsilon, self.generator) for row in q], states

    def first_target_row(self, batch: SegmentBatch) -> int:
        """The first state whose target-network values the targets need."""
        return 1

    def targets_from(self, batch: SegmentBatch, q_after: torch.Tensor,
                     online_after: torch.Tensor | None) -> torch.Tensor:
        """y_i of one segment from ``q_after`` = Q(s_j, .; theta^-), j from the first row,
        and with double Q ``online_after`` = Q(s_j, .; theta') of the same rows."""
        raise NotImplementedError

    def loss(self, model: Any, target: Any, batch: SegmentBatch
             ) -> tuple[torch.Tensor, dict[str, float]]:
        return self.loss_many(model, target, [batch])

    def loss_many(self, model: Any, target: Any, batches: Sequence[SegmentBatch]
                  ) -> tuple[torch.Tensor, dict[str, float]]:
        """sum_i (y_i - Q(s_i, a_i; theta'))^2 over the steps of every segment."""
        extra = 1 if self.double_q else 0
        with last_conv_maps(model) as maps:
            outputs = segment_outputs(model, batches,
                                      [slice(0, b.steps + extra) for b in batches])
        taken = join([q[: b.steps].gather(1, b.actions[: b.steps].unsqueeze(1)).squeeze(1)
                      for (q,), b in zip(outputs, batches, strict=True)])
        firsts = [self.first_target_row(b) for b in batches]
        q_after = target_q_many(target, batches, firsts)
        online_after = ([q[first:].detach() for (q,), first in zip(outputs, firsts, strict=True)]
                        if self.double_q else [None] * len(batches))
        y = join([self.targets_from(b, q, online) for b, q, online
                  in zip(batches, q_after, online_after, strict=True)])
        loss = (y - taken).pow(2).sum()
        return loss, {"loss": loss.item(), "q_mean": float(taken.detach().mean()),
                      "epsilon": self.epsilon_now, **q_spread(outputs), **live_units(maps)}


class OneStepQ(ValueBased):
    config = OneStepQConfig

    def targets_from(self, batch: SegmentBatch, q_after: torch.Tensor,
                     online_after: torch.Tensor | None) -> torch.Tensor:
        return one_step_targets(batch.rewards, batch.terminals,
                                state_values(q_after, online_after), self.cfg.gamma)


class OneStepSarsa(ValueBased):
    config = OneStepSarsaConfig
    needs_next_action = True

    def targets_from(self, batch: SegmentBatch, q_after: torch.Tensor,
                     online_after: torch.Tensor | None) -> torch.Tensor:
        steps = batch.steps
        # a' for the last step is the one the next segment starts with (0 after a terminal,
        # where it is never used)
        following = batch.next_action if batch.next_action is not None else 0
        next_actions = torch.cat([batch.actions[1:steps],
                                  torch.tensor([following], dtype=torch.int64)])
        chosen = q_after.gather(1, next_actions.unsqueeze(1)).squeeze(1)
        return one_step_targets(batch.rewards, batch.terminals, chosen, self.cfg.gamma)


class NStepQ(ValueBased):
    config = NStepQConfig

    def __init__(self, algo_cfg: Any, generator: torch.Generator,
                 exploration_seed: int | None = None, environments: int = 1) -> None:
        super().__init__(algo_cfg, generator, exploration_seed, environments)
        # below 1, every state after a step is mixed into the targets, not only the last
        self.lambda_return = float(algo_cfg.lambda_return)

    @staticmethod
    def steps_per_update(algo_cfg: Any) -> int:
        return int(algo_cfg.t_max)

    def describe(self) -> str:
        lam = f", lambda-returns {self.lambda_return}" if self.lambda_return < 1 else ""
        return super().describe() + lam

    def first_target_row(self, batch: SegmentBatch) -> int:
        if self.lambda_return < 1.0:
            return 1
        # past the last state after a terminal: the return bootstraps 0, no target value
        return batch.steps + 1 if batch.terminals[-1] else batch.steps

    def targets_from(self, batch: SegmentBatch, q_after: torch.Tensor,
                     online_after: torch.Tensor | None) -> torch.Tensor:
        if self.lambda_return < 1.0:
            return lambda_q_targets(batch.rewards, batch.terminals,
                                    state_values(q_after, online_after), self.cfg.gamma,
                                    self.lambda_return)
        if batch.terminals[-1]:
            bootstrap = torch.zeros(1)
        elif online_after is not None:  # one value: the max below hands it back
            bootstrap = state_values(q_after[-1:], online_after[-1:])
        else:
            bootstrap = q_after[-1]
        return nstep_q_targets(batch.rewards, batch.terminals, bootstrap, self.cfg.gamma)
