"""The batched losses against the paper's pseudocode (asyncrl/algos/paper.py): for k segments
of different lengths and endings, one update's loss and its gradients are the sum of what
Algorithms S3, S2 and 1 accumulate over each segment alone, state by state."""

import pytest
import torch
from gymnasium.spaces import Box, Discrete

from asyncrl.algos import build_algorithm
from asyncrl.algos.paper import a3c_segment_loss, nstep_q_segment_loss, one_step_segment_loss
from asyncrl.algos.segment import SegmentBatch
from asyncrl.nets import build_model
from tests.algos.test_q_targets import TableQ
from tests.conftest import compose

# (steps, learning terminal at the end): a full segment that bootstraps, one cut short by a
# terminal, a one-step segment that bootstraps, a full one that ends the episode
SHAPES = [(5, False), (3, True), (1, False), (5, True)]
PAPERS = ("algo.gae_lambda=1.0", "algo.episode_updates=false")  # GAE off: the paper's advantage


def _segments(model, generator, continuous=False, next_actions=False):
    batches = []
    for steps, terminal in SHAPES:
        obs = torch.randn(steps + 1, 4, generator=generator)
        actions = (torch.randn(steps, 1, generator=generator) if continuous
                   else torch.randint(2, (steps,), generator=generator))
        rewards = torch.randn(steps, generator=generator).tolist()
        state = model.initial_state()
        if state is not None:  # a segment that starts mid-episode, from a state of its own
            state = _random_like(state, generator)
        following = None if terminal or not next_actions else int(
            torch.randint(2, (), generator=generator))
        batches.append(SegmentBatch(obs, actions, rewards, [False] * (steps - 1) + [terminal],
                                    state, following))
    return batches


def _random_like(state, generator):
    """A recurrent state of the same nesting (the Gaussian net's is one per branch)."""
    if isinstance(state, torch.Tensor):
        return torch.randn(state.shape, generator=generator) * 0.5
    return tuple(_random_like(part, generator) for part in state)


def _assert_same_loss_and_gradients(batched, reference, params):
    assert float(batched.detach()) == pytest.approx(float(reference.detach()), rel=1e-5,
                                                    abs=1e-5)
    for mine, papers in zip(torch.autograd.grad(batched, params, allow_unused=True),
                            torch.autograd.grad(reference, params, allow_unused=True),
                            strict=True):
        if papers is None:
            assert mine is None or not mine.any()
        else:
            torch.testing.assert_close(mine, papers, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("network", ["ff", "lstm", "gaussian"])
def test_a3c_one_update_is_algorithm_s3_summed_over_its_segments(network):
    continuous = network == "gaussian"
    env = "mujoco/inverted_pendulum" if continuous else "classic/cartpole"
    cfg = compose(f"env={env}", f"network={network}", "algo=a3c", *PAPERS,
                  "algo.entropy_beta=0.01")
    torch.manual_seed(0)
    model = build_model(cfg, Box(-1, 1, (4,)), Box(-1, 1, (1,)) if continuous else Discrete(2),
                        "actor_critic")
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    batches = _segments(model, torch.Generator().manual_seed(1), continuous)
    batched, _ = algorithm.loss_many(model, None, batches)
    reference = sum(a3c_segment_loss(model, b, cfg.algo.gamma, cfg.algo.entropy_beta,
                                     cfg.algo.value_loss_coef) for b in batches)
    _assert_same_loss_and_gradients(batched, reference, list(model.parameters()))


@pytest.mark.parametrize("network", ["ff", "lstm"])
@pytest.mark.parametrize("algo", ["nstep_q", "one_step_q", "one_step_sarsa"])
def test_a_value_based_update_is_the_papers_algorithm_summed_over_its_segments(algo, network):
    cfg = compose("env=classic/cartpole", f"network={network}", f"algo={algo}",
                  *(["algo.lambda_return=1.0"] if algo == "nstep_q" else []))
    torch.manual_seed(0)
    model = build_model(cfg, Box(-1, 1, (4,)), Discrete(2), "q")
    target = build_model(cfg, Box(-1, 1, (4,)), Discrete(2), "q")  # θ⁻: other weights
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    assert not algorithm.double_q  # the paper's targets
    batches = _segments(model, torch.Generator().manual_seed(1),
                        next_actions=algo == "one_step_sarsa")
    batched, _ = algorithm.loss_many(model, target, batches)
    gamma = cfg.algo.gamma
    if algo == "nstep_q":
        reference = sum(nstep_q_segment_loss(model, target, b, gamma) for b in batches)
    else:
        reference = sum(one_step_segment_loss(model, target, b, gamma,
                                              sarsa=algo == "one_step_sarsa") for b in batches)
    _assert_same_loss_and_gradients(batched, reference, list(model.parameters()))


def test_the_reference_is_the_pseudocode_on_hand_worked_numbers():
    """Algorithm S2 on a two-step segment that bootstraps, with Q read from a table:
    R = max Q(s_2; θ⁻) = 3; R <- r_1 + γR = 1 + 0.5 * 3 = 2.5; R <- r_0 + γR = 0.5 + 1.25
    = 1.75."""

    online = TableQ([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    target = TableQ([[0.0, 0.0], [0.0, 0.0], [3.0, -1.0]])
    batch = SegmentBatch(torch.tensor([[0.0], [1.0], [2.0]]), torch.tensor([0, 1]),
                         [0.5, 1.0], [False, False])
    loss = nstep_q_segment_loss(online, target, batch, gamma=0.5)
    # (1.75 - Q(s_0, a_0) = 1)^2 + (2.5 - Q(s_1, a_1) = 2)^2 = 0.5625 + 0.25
    assert float(loss.detach()) == pytest.approx(0.8125)
