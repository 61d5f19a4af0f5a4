"""The A3C loss and its gradients against hand-computed values."""

import math

import pytest
import torch

from asyncrl.algos.a3c import a3c_loss as loss_from_parts
from asyncrl.nets.distributions import CategoricalPolicy

SOFTMAX = CategoricalPolicy()


def a3c_loss(logits, values, actions, returns, entropy_beta, value_loss_coef):
    """The loss of a softmax policy, from its logits."""
    return loss_from_parts(SOFTMAX.log_prob(logits, actions), SOFTMAX.entropy(logits), values,
                           returns, entropy_beta, value_loss_coef)


def test_loss_terms_on_two_actions():
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]], requires_grad=True)
    values = torch.tensor([0.5, 1.0], requires_grad=True)
    actions = torch.tensor([0, 1])
    returns = torch.tensor([1.5, 0.0])
    loss = a3c_loss(logits, values, actions, returns, entropy_beta=0.1, value_loss_coef=0.5)
    # pi0 = (.5,.5), pi1 = (.75,.25); advantages 1.0 and -1.0
    policy = -(math.log(0.5) * 1.0 + math.log(0.25) * -1.0)
    value = 1.0**2 + 1.0**2
    entropy = math.log(2) - (0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert loss.policy.item() == pytest.approx(policy, abs=1e-6)
    assert loss.value.item() == pytest.approx(value, abs=1e-6)
    assert loss.entropy.item() == pytest.approx(entropy, abs=1e-6)
    assert loss.total.item() == pytest.approx(policy + 0.5 * value - 0.1 * entropy, abs=1e-6)


def test_value_gradient_is_v_minus_r_and_policy_term_does_not_reach_value():
    logits = torch.zeros(1, 3, requires_grad=True)
    values = torch.tensor([2.0], requires_grad=True)
    loss = a3c_loss(logits, values, torch.tensor([1]), torch.tensor([5.0]),
                    entropy_beta=0.0, value_loss_coef=0.5)
    loss.total.backward()
    # d/dV of 0.5 (R - V)^2 = V - R = -3, with nothing added by the policy term
    assert values.grad.item() == pytest.approx(-3.0)
    # policy gradient of -log pi(a) * A with A = 3 and uniform pi: 3 * (pi - onehot)
    assert logits.grad.tolist()[0] == pytest.approx([1.0, -2.0, 1.0])


def test_entropy_bonus_pushes_towards_uniform():
    logits = torch.tensor([[2.0, 0.0]], requires_grad=True)
    loss = a3c_loss(logits, torch.zeros(1), torch.tensor([0]), torch.zeros(1),
                    entropy_beta=1.0, value_loss_coef=0.0)
    loss.total.backward()
    # descending the loss must lower the favoured logit relative to the other
    assert logits.grad[0, 0] > logits.grad[0, 1]


class TableActorCritic(torch.nn.Module):
    """Uniform policy over two actions and V(s) = values[s]: observations are row indices."""

    recurrent = False
    distribution = SOFTMAX

    def __init__(self, values):
        super().__init__()
        self.values = torch.nn.Parameter(torch.tensor(values))

    def forward(self, obs, state=None):
        rows = obs.long().view(-1)
        return torch.zeros(len(rows), 2), self.values[rows], state


def test_two_segments_in_one_update_each_bootstrap_from_their_own_last_state():
    from asyncrl.algos import A3C, SegmentBatch
    from tests.conftest import compose

    cfg = compose("algo=a3c", "algo.gamma=0.9", "algo.entropy_beta=0",
                  "algo.value_loss_coef=1").algo
    a3c = A3C(cfg, torch.Generator())
    model = TableActorCritic([0.5, 0.2, 2.0, 0.1, 5.0])
    cut = SegmentBatch(obs=torch.tensor([[0], [1], [2]]), actions=torch.tensor([0, 1]),
                       rewards=[1.0, 0.0], terminals=[False, False])
    ended = SegmentBatch(obs=torch.tensor([[3], [4]]), actions=torch.tensor([1]),
                         rewards=[-1.0], terminals=[True])
    _, stats = a3c.loss_many(model, None, [cut, ended])
    # cut: R_1 = 0 + 0.9 V(s_2) = 1.8, R_0 = 1 + 0.9 * 1.8 = 2.62; ended: R_0 = -1, V(s_4) unused
    advantages = [2.62 - 0.5, 1.8 - 0.2, -1.0 - 0.1]
    assert stats["value_loss"] == pytest.approx(sum(a * a for a in advantages))
    assert stats["policy_loss"] == pytest.approx(math.log(2) * sum(advantages))
    assert stats["entropy"] == pytest.approx(math.log(2))  # per step, over all 3 steps
    # over every state read, the bootstraps V(s_2) and V(s_4) too: pstdev(.5, .2, 2, .1, 5)
    assert stats["value_spread"] == pytest.approx(1.851053753946654)
    assert stats["policy_spread"] == 0.0  # the same logits on every state


class LogitTableActorCritic(TableActorCritic):
    """As TableActorCritic, with logits (V(s), 0): the policy differs across states too."""

    def forward(self, obs, state=None):
        logits, values, state = super().forward(obs, state)
        return torch.stack([values, logits[:, 1]], dim=1), values, state


def test_the_output_spreads_are_each_outputs_spread_over_every_state_read():
    from asyncrl.algos import A3C, SegmentBatch
    from tests.conftest import compose

    a3c = A3C(compose("algo=a3c").algo, torch.Generator())
    model = LogitTableActorCritic([1.0, 3.0, 2.0, 6.0])
    first = SegmentBatch(obs=torch.tensor([[0], [1]]), actions=torch.tensor([0]),
                         rewards=[0.0], terminals=[False])
    second = SegmentBatch(obs=torch.tensor([[2], [3]]), actions=torch.tensor([1]),
                          rewards=[0.0], terminals=[False])
    _, stats = a3c.loss_many(model, None, [first, second])
    # V over the 4 states: mean 3, deviations -2, 0, -1, 3: sqrt(14 / 4); the logits' first
    # column spreads as much, the second not at all: their mean is half of it
    assert stats["value_spread"] == pytest.approx(math.sqrt(3.5))
    assert stats["policy_spread"] == pytest.approx(math.sqrt(3.5) / 2)


def test_live_units_are_the_share_of_outputs_that_differ_across_the_states():
    from asyncrl.algos.segment import live_units

    # columns: dead (0 everywhere), constant (1 everywhere: it fires but reads nothing),
    # live in the second piece only, live in both
    first = torch.tensor([[0.0, 1.0, 2.0, 0.0], [0.0, 1.0, 2.0, 5.0]])
    second = torch.tensor([[0.0, 1.0, 3.0, 1.0]])
    assert live_units([first, second]) == {"live_units": 0.5}
    assert live_units([first]) == {"live_units": 0.25}
    assert live_units([second]) == {} and live_units([]) == {}  # one state: nothing differs


@pytest.mark.parametrize("algo", ["a3c", "nstep_q"])
def test_an_update_reads_the_live_units_the_probe_reads_on_its_states(algo):
    """The workers' live_units is the probe's "live units after conv.2" on the update's
    states; silencing half the last conv's channels takes it to half or below."""
    from asyncrl.algos import SegmentBatch, build_algorithm
    from asyncrl.envs import make_env
    from asyncrl.nets import build_model
    from asyncrl.tools.probe import _relu_outputs
    from tests.conftest import compose

    cfg = compose(f"algo={algo}", "env=gym", "env.id=tests.gym_test_envs:TinyImage-v0",
                  "envs_per_worker=1")
    algorithm = build_algorithm(cfg.algo, torch.Generator().manual_seed(0))
    env = make_env(cfg.env)
    torch.manual_seed(0)
    model = build_model(cfg, env.observation_space, env.action_space, algorithm.head)
    obs = [env.reset(seed=0)[0]]
    for action in (1, 0, 1, 2):
        obs.append(env.step(action)[0])
    states = torch.stack([torch.from_numpy(o) for o in obs])
    batch = SegmentBatch(obs=states, actions=torch.tensor([0, 1, 2, 1]),
                         rewards=[0.0, 1.0, 0.0, 1.0], terminals=[False] * 4)
    steps = len(states) - (0 if algo == "a3c" else 1)
    probe_live = {}
    for silenced in (False, True):
        if silenced:
            last = [m for m in model.torso.conv if isinstance(m, torch.nn.Conv2d)][-1]
            with torch.no_grad():
                half = last.out_channels // 2
                last.weight[:half] = 0.0
                last.bias[:half] = -1.0
        _, stats = algorithm.loss_many(model, model, [batch])
        outputs = _relu_outputs(model, states[:steps])
        name = list(outputs)[-2]  # the last conv's ReLU; the fc layer's comes after it
        probe_live[silenced] = float((outputs[name].std(dim=0) > 1e-6).float().mean())
        assert stats["live_units"] == pytest.approx(probe_live[silenced])
    assert 0 < probe_live[True] <= 0.5 < probe_live[False]
