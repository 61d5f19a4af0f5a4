"""The torso's one-pass input (asyncrl/nets/screen_input.py) against the torch ops it
replaces: the same float32 values to the bit."""

from __future__ import annotations

import pytest
import torch

from asyncrl.nets.screen_input import scaled_screens
from asyncrl.nets.torsos import ConvTorso, background_level


def _screens(batch: int, channels: int, seed: int) -> torch.Tensor:
    """Screens of one flat grey with a third of their pixels any other grey level."""
    g = torch.Generator().manual_seed(seed)
    flat = torch.full((batch, channels, 84, 84), 87, dtype=torch.uint8)
    noise = torch.randint(0, 256, flat.shape, generator=g, dtype=torch.uint8)
    return torch.where(torch.rand(flat.shape, generator=g) < 0.35, noise, flat)


def _with_torch_ops(obs: torch.Tensor, centre: bool) -> torch.Tensor:
    scaled = obs.to(torch.float32, copy=True).mul_(1.0 / 255.0)
    return scaled.sub_(background_level(obs)) if centre else scaled


@pytest.mark.parametrize("layout", [torch.channels_last, torch.contiguous_format])
@pytest.mark.parametrize(("batch", "channels"), [(1, 4), (16, 4), (5, 3), (2, 1)])
@pytest.mark.parametrize("centre", [True, False])
def test_the_loop_gives_the_torch_ops_bits(layout, batch, channels, centre):
    obs = _screens(batch, channels, seed=batch * 10 + channels).contiguous(memory_format=layout)
    prepared = scaled_screens(obs, centre=centre)
    assert prepared is not None
    assert prepared.dtype == torch.float32 and prepared.shape == obs.shape
    by_torch = _with_torch_ops(obs, centre).contiguous(memory_format=torch.channels_last)
    assert torch.equal(prepared, by_torch)
    assert prepared.stride() == by_torch.stride()  # the convs after it pick their algorithm by it


def test_a_tie_between_two_grey_levels_goes_to_the_lower_as_argmax_does():
    obs = torch.zeros((1, 2, 84, 84), dtype=torch.uint8)
    obs[0, -1, :42] = 200  # half the newest frame 200, half 30: the count is level
    obs[0, -1, 42:] = 30
    obs[0, 0] = 200  # an older frame does not vote
    prepared = scaled_screens(obs, centre=True)
    assert prepared is not None
    assert background_level(obs).item() * 255 == pytest.approx(30)
    assert prepared[0, -1, 60, 0].item() == 0.0  # the 30s read 0
    assert torch.equal(prepared, _with_torch_ops(obs, centre=True))


@pytest.mark.parametrize("obs", [
    torch.zeros((3, 2, 4, 84, 84), dtype=torch.uint8),  # (steps, environments, ...)
    torch.zeros((2, 4, 84, 84), dtype=torch.float32),
    torch.zeros((2, 12), dtype=torch.uint8),
])
def test_anything_but_a_batch_of_uint8_screens_is_left_to_the_torch_ops(obs):
    assert scaled_screens(obs, centre=True) is None


def test_a_background_torso_reads_the_loops_values_and_a_mean_torso_the_torch_ops():
    obs = _screens(6, 4, seed=1).contiguous(memory_format=torch.channels_last)
    background = ConvTorso((4, 84, 84), centre_input=True, centre_on="background")
    assert torch.equal(background.prepared(obs), _with_torch_ops(obs, centre=True))
    mean = ConvTorso((4, 84, 84), centre_input=True, centre_on="mean")
    scaled = obs.float() * (1.0 / 255.0)
    assert torch.allclose(mean.prepared(obs), scaled - scaled.mean(dim=(1, 2, 3), keepdim=True),
                          atol=1e-7)


def test_a_batch_of_no_screens_prepares_to_an_empty_batch():
    prepared = scaled_screens(torch.zeros((0, 4, 84, 84), dtype=torch.uint8), centre=True)
    assert prepared is not None and prepared.shape == (0, 4, 84, 84)


def test_a_view_into_a_segments_buffer_reads_its_own_screens():
    # the paper's loop acts on obs_bufs[i][t : t + 1], a view at an offset into the buffer
    buffer = _screens(6, 4, seed=7).contiguous(memory_format=torch.channels_last)
    view = buffer[3:4]
    prepared = scaled_screens(view, centre=True)
    assert prepared is not None
    assert torch.equal(prepared, _with_torch_ops(buffer, centre=True)[3:4])


def test_an_uncentred_torso_reads_the_loops_scaled_screens():
    obs = _screens(3, 4, seed=2).contiguous(memory_format=torch.channels_last)
    torso = ConvTorso((4, 84, 84), centre_input=False, centre_on="background")
    assert torch.equal(torso.prepared(obs), obs.float() * (1.0 / 255.0))
    assert torch.equal(torso.prepared(obs), _with_torch_ops(obs, centre=False))


def test_screens_of_no_channels_are_left_to_the_torch_ops():
    assert scaled_screens(torch.zeros((2, 0, 84, 84), dtype=torch.uint8), centre=True) is None
