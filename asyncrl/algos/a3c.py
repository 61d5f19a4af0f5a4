"""Asynchronous advantage actor-critic (paper, Algorithm S3 and Section 4).

policy:  -sum_i log pi(a_i|s_i) (R_i - V(s_i))      (no gradient through the advantage)
value:    value_loss_coef * sum_i (R_i - V(s_i))^2
entropy: -entropy_beta * sum_i H(pi(.|s_i))         (a bonus, so it is subtracted)

Sums, not means: the paper accumulates gradients over the segment's steps. ``paper.py``
writes Algorithm S3 for one segment as the pseudocode does; ``loss_many`` of k segments is
tested against the sum of those.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from asyncrl.algos.configs import A3CConfig
from asyncrl.algos.returns import advantages, discounted_returns, lambda_returns
from asyncrl.algos.segment import (
    SegmentBatch,
    join,
    last_conv_maps,
    live_units,
    segment_outputs,
)


@dataclass
class A3CLoss:
    total: torch.Tensor
    policy: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor


def a3c_loss(
    log_probs: torch.Tensor,
    entropies: torch.Tensor,
    values: torch.Tensor,
    returns: torch.Tensor,
    entropy_beta: float,
    value_loss_coef: float,
) -> A3CLoss:
    """Loss whose gradient is the paper's d(theta) + d(theta_v) for one segment.

    ``log_probs[i]`` is log pi(a_i|s_i) of the action taken, ``entropies[i]`` H(pi(.|s_i)):
    the same for a softmax and a Gaussian policy.
    """
    entropy = entropies.sum()
    policy_loss = -(log_probs * advantages(returns, values)).sum()
    value_loss = (returns - values).pow(2).sum()
    total = policy_loss + value_loss_coef * value_loss - entropy_beta * entropy
    return A3CLoss(total=total, policy=policy_loss, value=value_loss, entropy=entropy)


def _first(policy_out: Any, steps: int) -> Any:
    """The policy output of the first ``steps`` states (a tensor, or a Gaussian's pair)."""
    if isinstance(policy_out, tuple):
        return tuple(part[:steps] for part in policy_out)
    return policy_out[:steps]


def output_spreads(outputs: Sequence[tuple[Any, torch.Tensor]]) -> dict[str, float]:
    """How much V(s) and the policy's output (logits, or a Gaussian's mean) differ across
    every state the update read, bootstrap states included: each output's standard
    deviation over the states, the policy's averaged over its outputs."""
    values = join([segment_values.detach() for _, segment_values in outputs])
    policy = join([(out[0] if isinstance(out, tuple) else out).detach() for out, _ in outputs])
    return {"value_spread": float(values.std(correction=0)),
            "policy_spread": float(policy.std(dim=0, correction=0).mean())}


class A3C:
    """Acts by sampling pi(.|s; theta'), learns from the segment's n-step returns.

    With ``episode_updates`` a segment is a whole episode and its returns are not
    bootstrapped (the paper's choice for MuJoCo); ``segment_steps`` is then None and the
    worker sizes its buffers by the environment's time limit.
    """

    config = A3CConfig
    head = "actor_critic"  # the network it learns: a policy and a value (nets.build_model)
    uses_target = False
    needs_next_action = False
    # the spread of V(s) and of the policy's output over an update's states: both 0 once the
    # network no longer reads its input (asyncrl/run/blindness.py)
    # live_units: the share of the last conv's outputs that still differ across them
    metrics = ("loss", "policy_loss", "value_loss", "entropy", "value_spread", "policy_spread",
               "live_units")
    # sums over an update's rows: a pass in several optimizer steps (minibatches) adds them
    summed_metrics = ("loss", "policy_loss", "value_loss")

    def __init__(self, algo_cfg: Any, generator: torch.Generator,
                 exploration_seed: int | None = None, environments: int = 1) -> None:
        # exploration_seed and environments are not used: A3C explores by sampling its
        # policy, with no draw per slot or environment
        self.cfg = algo_cfg
        self.generator = generator
        self.episode_updates = bool(algo_cfg.episode_updates)
        self.segment_steps: int | None = None if self.episode_updates else int(algo_cfg.t_max)
        # below 1 the returns are GAE(λ) advantages plus V, so R - V is the GAE advantage
        # and the critic regresses on the λ-return; at 1 the paper's n-step return, as is
        self.gae_lambda = float(algo_cfg.gae_lambda)

    @staticmethod
    def blindness_spreads(algo_cfg: Any, segments: int) -> tuple[str, ...]:
        """What the blindness watch reads: both spreads, since V alone can be the same on
        every state of a network that reads the screen, where the reward follows the action.
        Every update reads two states at least (a segment's and its bootstrap state)."""
        return ("value_spread", "policy_spread")

    def describe(self) -> str:
        updates = ("whole-episode updates, no bootstrapping" if self.episode_updates
                   else f"t_max={self.segment_steps}")
        gae = f", GAE lambda={self.gae_lambda}" if self.gae_lambda < 1 else ""
        return f"{updates}, entropy_beta={self.cfg.entropy_beta}{gae}"

    def episode_began(self, environment: int) -> None:
        """Nothing to draw: A3C explores by sampling its policy."""

    def act(self, model: Any, obs: torch.Tensor, states: list[Any], frames: int,
            evaluating: bool = False, members: Sequence[int] | None = None
            ) -> tuple[list[Any], list[Any]]:
        """Actions for k environments from one forward (``obs`` is (k, ...)), and their
        recurrent states after; an evaluation samples pi as training does."""
        (policy_out, _), states = model.step_many(obs, states)
        return model.distribution.sample(policy_out, self.generator), states

    def loss(self, model: Any, target: Any, batch: SegmentBatch
             ) -> tuple[torch.Tensor, dict[str, float]]:
        return self.loss_many(model, target, [batch])

    def loss_many(self, model: Any, target: Any, batches: Sequence[SegmentBatch]
                  ) -> tuple[torch.Tensor, dict[str, float]]:
        """The summed loss of several segments, each bootstrapped from its own last state."""
        # one forward over s_t .. s_{t+n} of each segment: the last value is V(s_{t+n})
        with last_conv_maps(model) as maps:
            outputs = segment_outputs(model, batches,
                                      [slice(0, b.steps + 1) for b in batches])
        taken, values, returns, actions = [], [], [], []
        for batch, (policy_out, segment_values) in zip(batches, outputs, strict=True):
            steps = batch.steps
            bootstrap = (0.0 if batch.terminals[-1] or self.episode_updates
                         else float(segment_values[steps].detach()))
            if self.gae_lambda < 1.0:
                returns += self._gae_returns(batch, segment_values, bootstrap)
            else:
                returns += discounted_returns(batch.rewards, batch.terminals, bootstrap,
                                              self.cfg.gamma)
            taken.append(_first(policy_out, steps))
            values.append(segment_values[:steps])
            actions.append(batch.actions[:steps])
        policy_taken = (tuple(join(part) for part in zip(*taken, strict=True))
                        if isinstance(taken[0], tuple) else join(taken))
        distribution = model.distribution
        loss = a3c_loss(distribution.log_prob(policy_taken, join(actions)),
                        distribution.entropy(policy_taken), join(values),
                        torch.tensor(returns), self.cfg.entropy_beta, self.cfg.value_loss_coef)
        return loss.total, {
            "loss": loss.total.item(), "policy_loss": loss.policy.item(),
            "value_loss": loss.value.item(), "entropy": loss.entropy.item() / len(returns),
            **output_spreads(outputs), **live_units(maps),
        }

    def _gae_returns(self, batch: SegmentBatch, segment_values: torch.Tensor,
                     bootstrap: float) -> list[float]:
        """GAE(λ) advantage + V(s_i) for each step: the λ-return on V, V(s_n) = bootstrap."""
        after = segment_values[1 : batch.steps + 1].detach().tolist()
        after[-1] = bootstrap
        return lambda_returns(batch.rewards, batch.terminals, after, self.cfg.gamma,
                              self.gae_lambda)
