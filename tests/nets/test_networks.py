"""The actor-critic network's initialisation and input keys."""

from __future__ import annotations

import pytest
import torch
from gymnasium.spaces import Box, Discrete

from asyncrl.nets import build_model
from asyncrl.nets.torsos import ConvTorso, background_level
from tests.conftest import compose


def test_centred_input_ignores_a_uniform_change_of_brightness():
    torch.manual_seed(0)
    torso = ConvTorso((4, 84, 84), centre_input=True)
    obs = torch.randint(0, 200, (3, 4, 84, 84), dtype=torch.uint8)
    brighter = obs + 40  # every pixel of every frame 40 grey levels up
    assert torch.allclose(torso(obs), torso(brighter), atol=1e-5)
    plain = ConvTorso((4, 84, 84), centre_input=False)
    plain.load_state_dict(torso.state_dict())
    assert not torch.allclose(plain(obs), plain(brighter), atol=1e-3)


def test_background_centring_subtracts_the_newest_frames_commonest_pixel():
    torso = ConvTorso((2, 36, 36), centre_input=True, centre_on="background")
    seen = []
    torso.conv[0].register_forward_hook(lambda _m, inp, _o: seen.append(inp[0]))
    obs = torch.full((2, 2, 36, 36), 87, dtype=torch.uint8)  # Pong-like: a grey background
    obs[0, :, :10] = 236  # 360 of 1,296 pixels white: the mean moves, the mode stays 87
    obs[1] = 0  # Breakout-like: a black background ...
    obs[1, -1, :5] = 200  # ... with 180 pixels of bricks in the newest frame
    obs[1, 0, 0, 0] = 255  # an older frame's pixel does not count
    torso(obs)
    first_conv_input = seen[0]
    assert first_conv_input[0, 0, 20, 20].item() == pytest.approx(0.0, abs=1e-7)
    assert first_conv_input[0, 0, 0, 0].item() == pytest.approx((236 - 87) / 255)
    assert torch.count_nonzero(first_conv_input[1, -1, 5:]) == 0  # black stays 0
    assert first_conv_input[1, -1, 0, 0].item() == pytest.approx(200 / 255)


def test_background_centring_ignores_a_uniform_change_of_brightness():
    torch.manual_seed(0)
    torso = ConvTorso((4, 84, 84), centre_input=True, centre_on="background")
    obs = torch.randint(0, 200, (3, 4, 84, 84), dtype=torch.uint8)
    obs[:, :, 20:] = 60  # a background on most of each screen
    assert torch.allclose(torso(obs), torso(obs + 40), atol=1e-5)


def test_background_level_reads_a_batch_of_segments():
    # the learner's batch is (steps, environments, C, H, W)
    obs = torch.zeros(5, 3, 4, 8, 8, dtype=torch.uint8)
    obs[2, 1] = 51
    level = background_level(obs)
    assert level.shape == (5, 3, 1, 1, 1)
    assert level[2, 1].item() == pytest.approx(0.2) and level.sum().item() == pytest.approx(0.2)


def test_the_torso_scales_a_copy_and_leaves_its_input_as_it_was():
    # the scaling runs in place on the float copy; a float input must not be that copy
    torso = ConvTorso((1, 36, 36), centre_input=False)
    seen = []
    torso.conv[0].register_forward_hook(lambda _m, inp, _o: seen.append(inp[0]))
    screens = torch.full((2, 1, 36, 36), 102, dtype=torch.uint8)
    floats = screens.float()
    torso(screens)
    torso(floats)
    assert seen[0][0, 0, 0, 0].item() == pytest.approx(0.4)  # 102 / 255
    assert torch.equal(seen[0], seen[1])
    assert torch.equal(floats, torch.full((2, 1, 36, 36), 102.0))


def test_the_torso_scales_every_grey_level_to_the_bits_it_always_had():
    # scaling in place must round as the out-of-place product before it did
    torso = ConvTorso((1, 36, 36), centre_input=False)
    seen = []
    torso.conv[0].register_forward_hook(lambda _m, inp, _o: seen.append(inp[0]))
    levels = (torch.arange(36 * 36) % 256).to(torch.uint8).view(1, 1, 36, 36)
    torso(levels)
    assert torch.equal(seen[0], levels.float() * (1.0 / 255.0))


def test_centring_subtracts_each_observations_own_mean():
    torso = ConvTorso((1, 36, 36), centre_input=True)
    seen = []
    torso.conv[0].register_forward_hook(lambda _m, inp, _o: seen.append(inp[0]))
    obs = torch.stack([torch.full((1, 36, 36), 51, dtype=torch.uint8),
                       torch.full((1, 36, 36), 204, dtype=torch.uint8)])
    obs[1, 0, 0, :18] = 0  # half a row dark: mean (204 * 1278) / 1296
    torso(obs)
    first_conv_input = seen[0]
    assert first_conv_input[0].abs().max() < 1e-6  # a flat screen becomes all zeros
    assert first_conv_input[1, 0, 0, 0].item() == pytest.approx(-204 * 1278 / 1296 / 255)
    assert first_conv_input.mean(dim=(1, 2, 3)).abs().max() < 1e-6


@pytest.mark.parametrize("scale", [0.01, 0.5])
def test_policy_init_scale_multiplies_the_policy_layers_default_init(scale):
    spaces = (Box(0, 255, (4, 84, 84)), Discrete(6))
    torch.manual_seed(3)
    unit = build_model(compose("network.policy_init_scale=1"), *spaces, "actor_critic")
    torch.manual_seed(3)
    scaled = build_model(compose(f"network.policy_init_scale={scale}"), *spaces,
                         "actor_critic")
    assert torch.allclose(scaled.policy.weight, scale * unit.policy.weight)
    assert torch.equal(scaled.value.weight, unit.value.weight)
    assert scaled.policy.bias.abs().max() == 0 and scaled.value.bias.abs().max() == 0


def test_a_run_saved_before_centring_resumes_uncentred():
    from omegaconf import OmegaConf

    from asyncrl.config.saved import typed_config

    saved = OmegaConf.to_container(OmegaConf.structured(compose()), resolve=True)
    assert saved["network"]["centre_input"] is True
    assert typed_config(saved).network.centre_input is True
    del saved["network"]["centre_input"]  # as written before the key existed
    assert typed_config(saved).network.centre_input is False


def cartpole_spaces() -> tuple[Box, Discrete]:
    return Box(-float("inf"), float("inf"), (4,)), Discrete(2)


def test_a_run_saved_before_mlp_activation_resumes_on_relu():
    from omegaconf import OmegaConf

    from asyncrl.config.saved import typed_config

    saved = OmegaConf.to_container(OmegaConf.structured(compose("env=classic/cartpole")),
                                   resolve=True)
    assert typed_config(saved).network.mlp_activation == "tanh"
    del saved["network"]["mlp_activation"]
    assert typed_config(saved).network.mlp_activation == "relu"


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_the_mlp_torso_uses_the_activation_named(activation):
    model = build_model(compose("env=classic/cartpole", f"network.mlp_activation={activation}"),
                        *cartpole_spaces(), "actor_critic")
    kinds = {type(m).__name__ for m in model.torso.modules()}
    assert kinds & {"ReLU", "Tanh"} == {"ReLU" if activation == "relu" else "Tanh"}
    features = model.torso(torch.full((1, 4), 1e3))
    if activation == "tanh":
        assert features.abs().max() <= 1  # bounded, whatever the input


@pytest.mark.parametrize(("network", "action_space", "fragment"), [
    ("ff", Box(-1.0, 1.0, (2,)), "has a softmax policy; use network=gaussian"),
    ("lstm", Box(-1.0, 1.0, (2,)), "has a softmax policy; use network=gaussian"),
    ("gaussian", Discrete(3), "has discrete ones; use network=ff or network=lstm"),
])
def test_build_model_refuses_the_kind_of_action_by_the_same_words_as_validation(
        network, action_space, fragment):
    from asyncrl.action_kinds import action_kind_problem

    cfg = compose(f"network={network}", "setting=base")
    with pytest.raises(ValueError, match=fragment):
        build_model(cfg, Box(-1.0, 1.0, (4,)), action_space, "actor_critic")
    # the config's check gives the same reason for an environment by name
    problem = action_kind_problem(network, isinstance(action_space, Box), "env=x")
    assert problem is not None and problem.startswith("env=x") == (network != "gaussian")
    assert fragment in problem
    assert action_kind_problem(network, network == "gaussian", "env=x") is None
