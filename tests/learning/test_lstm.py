"""network=lstm: truncated BPTT over a segment, state carried within an episode and reset at
its end, and the loss's forward replaying exactly what acting saw."""

import gymnasium as gym
import torch

from asyncrl.algos import algorithm_class, build_algorithm
from asyncrl.learning.rollout import Actors
from asyncrl.nets import LSTMCore, build_model
from tests.conftest import ALGOS, VALUE_BASED, compose


def test_gradient_of_the_last_step_reaches_the_first_step():
    core = LSTMCore(8, hidden=16)
    features = torch.randn(5, 8, requires_grad=True)
    out, _ = core(features)
    out[-1].sum().backward()
    assert features.grad is not None
    assert features.grad[0].abs().sum() > 0  # through four recurrent steps


class RecordingAlgorithm:
    """Wraps an algorithm and keeps the network output of every acting step."""

    def __init__(self, inner):
        self.inner = inner
        self.needs_next_action = inner.needs_next_action
        self.outputs = []

    def act(self, model, obs, states, frames, evaluating=False, members=None):
        self.outputs.append(model.step_many(obs, states)[0][0].clone())
        return self.inner.act(model, obs, states, frames, evaluating, members)

    def episode_began(self, environment):
        self.inner.episode_began(environment)


class OneActor:
    """The worker's acting loop with one environment (the paper's), one segment a call."""

    def __init__(self, algo):
        cfg = compose("env=classic/cartpole", "network=lstm", f"algo={algo}")
        self.recorder = RecordingAlgorithm(
            build_algorithm(cfg.algo, torch.Generator().manual_seed(0)))
        self.actors = Actors(cfg, 3, self.recorder, 1)
        self.model = build_model(cfg, self.actors.env.observation_space,
                                 self.actors.env.action_space, algorithm_class(algo).head)
        self.actors.allocate(self.model, 5)
        self.obs_buf, self.action_buf = self.actors.obs_bufs[0], self.actors.action_bufs[0]

    def rollout(self):
        return self.actors.play(self.model, 0)[0]


def test_state_carries_across_segments_and_the_loss_replays_acting():
    actor = OneActor("a3c")
    first = actor.rollout()
    assert not any(s.abs().sum() for s in first.start_state)  # a new episode starts at zero
    assert not first.episode_over
    second = actor.rollout()
    assert all(s.abs().sum() > 0 for s in second.start_state)  # carried over
    assert all(s.grad_fn is None and not s.requires_grad for s in second.start_state)
    replay, _, _ = actor.model(actor.obs_buf[: second.steps], second.start_state)
    acted = torch.cat(actor.recorder.outputs[-second.steps:])
    assert torch.allclose(replay, acted, atol=1e-6)


def test_state_resets_at_the_end_of_an_episode():
    actor = OneActor("a3c")
    for _ in range(200):
        segment = actor.rollout()
        if segment.episode_over:
            break
    assert segment.episode_over and segment.finished is not None  # begun again in play
    after = actor.rollout()
    assert not any(s.abs().sum() for s in after.start_state)


def test_sarsa_takes_the_next_action_it_bootstrapped_with():
    actor = OneActor("one_step_sarsa")
    segment = actor.rollout()
    assert segment.next_action is not None and not segment.terminals[-1]
    actor.rollout()
    assert int(actor.action_buf[0]) == segment.next_action


def test_every_algorithm_builds_an_lstm_model_with_the_right_heads():
    space = gym.spaces.Box(-1, 1, (4,))
    for algo in ALGOS:
        cfg = compose("network=lstm", f"algo={algo}", "env=classic/cartpole")
        model = build_model(cfg, space, gym.spaces.Discrete(3), algorithm_class(algo).head)
        assert model.recurrent
        *heads, state = model(torch.zeros(7, 4), model.initial_state())
        assert isinstance(state, tuple) and [h.shape for h in state] == [(1, 1, 256)] * 2  # (h, c)
        # A3C: policy logits and a value per state; the value-based methods: Q per action
        want = [(7, 3)] if algo in VALUE_BASED else [(7, 3), (7,)]
        assert [h.shape for h in heads] == want, algo
