"""The dueling head and spatial softmax on hand-worked numbers, the Nature DQN's convs, and
how the config builds them into the networks."""

from __future__ import annotations

import math

import pytest
import torch
from gymnasium.spaces import Box, Discrete

from asyncrl.nets import build_model
from asyncrl.nets.dueling import DuelingHead, dueling_q
from asyncrl.nets.spatial_softmax import SpatialSoftmax
from tests.conftest import compose

IMAGES = Box(0, 255, (4, 84, 84), dtype="uint8")


def test_dueling_adds_the_value_to_mean_subtracted_advantages():
    value = torch.tensor([[1.0], [-2.0]])
    advantages = torch.tensor([[2.0, 4.0, 0.0], [1.0, 1.0, 1.0]])
    # row 0: mean A = 2, so Q = 1 + (0, 2, -2); row 1: equal advantages leave Q = V
    assert dueling_q(value, advantages).tolist() == [[1.0, 3.0, -1.0], [-2.0, -2.0, -2.0]]


def test_a_dueling_networks_mean_q_is_its_value_stream():
    torch.manual_seed(0)
    model = build_model(compose("algo=nstep_q", "network.dueling=true"), IMAGES, Discrete(6),
                        "q")
    assert isinstance(model.q, DuelingHead)
    obs = torch.randint(0, 255, (3, 4, 84, 84), dtype=torch.uint8)
    q, _ = model(obs)
    features, _ = model.features(obs, None)
    assert torch.allclose(q.mean(-1), model.q.value(features).squeeze(-1), atol=1e-5)


def test_spatial_softmax_of_a_one_hot_map_by_hand():
    # 2x2 map, 1 at row 0, column 1: weights e/(e+3) there and 1/(e+3) elsewhere, at
    # x = -1, 1, -1, 1 and y = -1, -1, 1, 1 (row by row)
    maps = torch.tensor([[[[0.0, 1.0], [0.0, 0.0]]]])
    e = math.e
    assert SpatialSoftmax(2, 2)(maps).tolist()[0] == pytest.approx(
        [(e - 1) / (e + 3), (1 - e) / (e + 3)])


def test_a_sharp_one_hot_lands_on_its_position():
    maps = torch.zeros(1, 2, 3, 5)
    maps[0, 0, 2, 1] = 100.0  # channel 0 at row 2, column 1: x = -0.5, y = 1
    maps[0, 1, 0, 4] = 100.0  # channel 1 at row 0, column 4: x = 1, y = -1
    # every x, then every y
    assert SpatialSoftmax(3, 5)(maps).tolist()[0] == pytest.approx([-0.5, 1.0, 1.0, -1.0])


@pytest.mark.parametrize(("network", "algo", "head"), [("ff", "a3c", "actor_critic"),
                                                       ("lstm", "nstep_q", "q")])
def test_spatial_softmax_feeds_the_fc_layer_two_numbers_per_channel(network, algo, head):
    cfg = compose(f"network={network}", f"algo={algo}", "network.spatial_softmax=true")
    model = build_model(cfg, IMAGES, Discrete(6), head)
    assert model.torso.fc[0].in_features == 2 * 32
    out = model(torch.zeros(2, 4, 84, 84, dtype=torch.uint8))
    assert out[0].shape == (2, 6)


@pytest.mark.parametrize("option", ["network.spatial_softmax=true", "network.conv=nature"])
def test_image_torso_options_are_refused_for_vector_observations(option):
    # the config check refuses these first; this is the builder's own guard for callers
    # that build a model without it
    cfg = compose("env=classic/cartpole", option)
    with pytest.raises(ValueError, match="needs image observations"):
        build_model(cfg, Box(-1, 1, (4,)), Discrete(2), "actor_critic")


def test_the_default_networks_keep_their_parameter_names():
    # checkpoints of runs made before the options load into today's default networks
    model = build_model(compose("algo=nstep_q"), IMAGES, Discrete(6), "q")
    names = set(model.state_dict())
    assert {"torso.conv.0.weight", "torso.conv.2.weight", "torso.fc.0.weight",
            "q.weight", "q.bias"} <= names


@pytest.mark.parametrize(("network", "algo", "head"), [("ff", "a3c", "actor_critic"),
                                                       ("lstm", "nstep_q", "q")])
def test_the_nature_convs_are_the_nature_dqns_three_layers(network, algo, head):
    cfg = compose(f"network={network}", f"algo={algo}", "network.conv=nature")
    model = build_model(cfg, IMAGES, Discrete(6), head)
    convs = [m for m in model.torso.conv if isinstance(m, torch.nn.Conv2d)]
    assert [(c.out_channels, c.kernel_size[0], c.stride[0]) for c in convs] == [
        (32, 8, 4), (64, 4, 2), (64, 3, 1)]
    assert model.torso.fc[0].in_features == 64 * 7 * 7  # 84 -> 20 -> 9 -> 7
    assert model(torch.zeros(2, 4, 84, 84, dtype=torch.uint8))[0].shape == (2, 6)


def _every_choice():
    from asyncrl.choices import Activation, CentreOn, Conv, TorsoInit

    return [("conv", c) for c in Conv] + [("torso_init", i) for i in TorsoInit] + [
        ("centre_on", c) for c in CentreOn] + [("mlp_activation", a) for a in Activation]


@pytest.mark.parametrize(("key", "value"), _every_choice())
def test_every_name_the_config_accepts_builds_a_network(key, value):
    """A choice's names are its type (asyncrl.choices): the config accepts each, and the
    builder's tables (conv stacks, inits, activations) have an entry for each."""
    cartpole = key == "mlp_activation"
    cfg = compose(*(["env=classic/cartpole"] if cartpole else []), f"network.{key}={value}",
                  *(["network.centre_input=true"] if key == "centre_on" else []))
    assert getattr(cfg.network, key) == value
    space = Box(-1, 1, (4,)) if cartpole else IMAGES
    model = build_model(cfg, space, Discrete(2), "actor_critic")
    obs = torch.zeros(1, *space.shape, dtype=torch.float32 if cartpole else torch.uint8)
    assert model(obs)[0].shape == (1, 2)


@pytest.mark.parametrize("conv", ["paper", "nature"])
def test_the_orthogonal_init_gives_each_torso_layer_gain_root_2_and_zero_bias(conv):
    cfg = compose("network.torso_init=orthogonal", f"network.conv={conv}")
    model = build_model(cfg, IMAGES, Discrete(6), "actor_critic")
    layers = [m for m in model.torso.modules() if isinstance(m, torch.nn.Conv2d | torch.nn.Linear)]
    assert len(layers) == (4 if conv == "nature" else 3)
    for layer in layers:
        rows = layer.weight.detach().flatten(1)
        # orthogonal rows (or columns, for a wide matrix) scaled by sqrt(2)
        gram = rows @ rows.T if rows.shape[0] <= rows.shape[1] else rows.T @ rows
        assert torch.allclose(gram, 2.0 * torch.eye(gram.shape[0]), atol=1e-4)
        assert torch.count_nonzero(layer.bias) == 0


def test_the_default_torso_init_is_lecun_normal_with_a_firing_bias():
    model = build_model(compose("setting=paper"), IMAGES, Discrete(6), "actor_critic")
    fc = model.torso.fc[0]
    assert torch.all(fc.bias == 0.1)
    # 2,592 inputs: std 1/sqrt(2592) ~ 0.0196, read from 663,552 draws
    assert math.isclose(float(fc.weight.detach().std()), 2592 ** -0.5, rel_tol=0.01)
