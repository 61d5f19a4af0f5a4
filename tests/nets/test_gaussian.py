"""network=gaussian: the spherical Gaussian head, the two unshared branches, the encoders."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.distributions import Independent, Normal

from asyncrl.algos import build_algorithm
from asyncrl.algos.segment import SegmentBatch
from asyncrl.nets.distributions import GaussianPolicy
from asyncrl.nets.gaussian import GaussianActorCritic, PixelEncoder
from tests.conftest import compose


def _reference(mu, var):
    return Independent(Normal(mu, var.sqrt().expand_as(mu)), 1)


def test_log_prob_and_entropy_match_torch_distributions():
    torch.manual_seed(0)
    mu = torch.randn(7, 3)
    var = torch.rand(7, 1) * 2 + 0.05
    actions = torch.randn(7, 3) * 2
    head = GaussianPolicy(3)
    reference = _reference(mu, var)
    torch.testing.assert_close(head.log_prob((mu, var), actions), reference.log_prob(actions))
    torch.testing.assert_close(head.entropy((mu, var)), reference.entropy())


def test_entropy_is_the_papers_per_dimension_term():
    var = torch.tensor([[0.5]])
    # paper: the cost is -1/2 (log(2 pi sigma^2) + 1) per dimension; the bonus is its negative
    expected = 2 * 0.5 * (math.log(2 * math.pi * 0.5) + 1)
    assert GaussianPolicy(2).entropy((torch.zeros(1, 2), var)).item() == pytest.approx(expected)


def test_samples_have_the_heads_mean_and_variance():
    head = GaussianPolicy(2)
    mu, var = torch.tensor([[1.0, -2.0]]), torch.tensor([[0.25]])
    generator = torch.Generator().manual_seed(3)
    draws = np.stack([head.sample((mu, var), generator)[0] for _ in range(20_000)])
    assert draws.dtype == np.float32 and draws.shape == (20_000, 2)
    np.testing.assert_allclose(draws.mean(0), [1.0, -2.0], atol=0.02)
    np.testing.assert_allclose(draws.var(0), [0.25, 0.25], rtol=0.05)


def test_a_batched_step_is_each_environments_own_step():
    """Acting for k environments in one forward (the one acting path) gives each one the
    mean, variance, value and both branches' recurrent states of a step of its own."""
    torch.manual_seed(0)
    model = GaussianActorCritic((5,), 2)
    obs = torch.randn(3, 5)
    # one environment mid-episode, two at the start of one (state None)
    _, _, carried = model(torch.randn(1, 5), model.initial_state())
    states = [None, carried, None]
    ((mu, var), value), after = model.step_many(obs, states)
    for i, state in enumerate(states):
        (mu_i, var_i), value_i, after_i = model(obs[i : i + 1], state)
        torch.testing.assert_close(mu[i : i + 1], mu_i)
        torch.testing.assert_close(var[i : i + 1], var_i)
        torch.testing.assert_close(value[i : i + 1], value_i)
        for mine, theirs in zip(after[i], after_i, strict=True):  # actor's, critic's
            torch.testing.assert_close(mine, theirs)
    samples = GaussianPolicy(2).sample((mu, var), torch.Generator().manual_seed(1))
    assert len(samples) == 3 and all(a.shape == (2,) for a in samples)


def test_policy_and_value_share_no_parameters():
    model = GaussianActorCritic((5,), 2)
    (mu, var), value, _ = model(torch.randn(4, 5), model.initial_state())
    assert mu.shape == (4, 2) and var.shape == (4, 1) and value.shape == (4,)
    assert (var > 0).all()
    value.sum().backward()
    critic = {id(p) for p in model.critic.parameters()} | {id(p) for p in model.value.parameters()}
    for param in model.parameters():
        touched = param.grad is not None and param.grad.abs().sum() > 0
        assert touched == (id(param) in critic)


def test_state_encoder_is_200_relu_units_and_lstm_128_by_default():
    cfg = compose("env=mujoco/inverted_pendulum")
    assert cfg.network.name == "gaussian"
    model = GaussianActorCritic((4,), 1, cfg.network.hidden, cfg.network.lstm_size)
    assert model.actor.torso.fc.out_features == 200
    assert model.actor.core.lstm.hidden_size == 128
    assert model.recurrent


def test_pixel_encoder_has_no_non_linearity():
    encoder = PixelEncoder((3, 84, 84))
    x = torch.randint(0, 128, (1, 3, 84, 84), dtype=torch.uint8)
    zero = encoder(torch.zeros_like(x))
    # an affine map: f(2x) - f(0) = 2 (f(x) - f(0))
    torch.testing.assert_close(encoder(2 * x) - zero, 2 * (encoder(x) - zero),
                               rtol=1e-4, atol=1e-4)


def test_whole_episode_update_does_not_bootstrap_even_at_a_time_limit():
    cfg = compose("env=mujoco/inverted_pendulum")
    assert cfg.algo.episode_updates and cfg.algo.entropy_beta == pytest.approx(1e-4)
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    assert algorithm.segment_steps is None
    model = GaussianActorCritic((4,), 1, lstm_size=0)
    with torch.no_grad():
        model.value.bias.fill_(100.0)  # a bootstrap would add gamma^k * ~100 to every return
        model.value.weight.zero_()
    batch = SegmentBatch(obs=torch.zeros(4, 4), actions=torch.zeros(3, 1),
                         rewards=[1.0, 1.0, 1.0], terminals=[False, False, False])
    _, stats = algorithm.loss(model, None, batch)
    gamma = cfg.algo.gamma
    returns = [1 + gamma + gamma**2, 1 + gamma, 1.0]
    assert stats["value_loss"] == pytest.approx(sum((r - 100.0) ** 2 for r in returns), rel=1e-5)


def test_lstm_replay_of_a_segment_matches_acting():
    torch.manual_seed(1)
    model = GaussianActorCritic((3,), 2, hidden=16, lstm_size=8)
    obs = torch.randn(6, 3)
    state = model.initial_state()
    acted = []
    with torch.no_grad():
        for t in range(6):
            (mu, _), value, state = model(obs[t : t + 1], state)
            acted.append((mu[0], value[0]))
        (mu_all, _), values, _ = model(obs, model.initial_state())
    for t, (mu, value) in enumerate(acted):
        torch.testing.assert_close(mu_all[t], mu)
        torch.testing.assert_close(values[t], value)
