"""Feature extractors shared by the policy and value heads."""

from __future__ import annotations

import torch
from torch import nn

from asyncrl.choices import Activation, CentreOn, Conv, TorsoInit
from asyncrl.nets.screen_input import SCALE, scaled_screens
from asyncrl.nets.spatial_softmax import SpatialSoftmax

FIRING_BIAS = 0.1


def init_for_nonnegative_inputs(module: nn.Module) -> None:
    """LeCun-normal weights (std 1/sqrt(fan_in)) and a bias of 0.1 for every layer.

    Screens are mostly flat background, so a conv unit sees nearly the same input at every
    position: once an update pushes its pre-activation below zero there, the ReLU never fires
    or gets gradient again. With torch's default init, Pong runs of 5-7M frames ended with
    6-18 % of the first layer's units alive and no learning; a positive bias starts every
    unit firing (the DQN-era Chainer heads used 0.1 for the same reason). Measurements in
    docs/notes/.
    """
    for layer in module.modules():
        if isinstance(layer, nn.Conv2d | nn.Linear):
            fan_in = layer.weight[0].numel()
            nn.init.normal_(layer.weight, std=fan_in ** -0.5)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, FIRING_BIAS)


def init_orthogonal(module: nn.Module) -> None:
    """Orthogonal weights with gain sqrt(2) and zero biases for every layer.

    The init of the OpenAI Baselines Atari networks, which SB3's and cleanrl's A2C and PPO
    keep (their policy and value heads get gains 0.01 and 1; here the heads keep their own
    init). An orthogonal matrix keeps the norm of what passes through it, so ReLU layers
    start neither saturated nor silent; whether that keeps Breakout's conv 2 alive, where
    ``lecun_bias`` loses it, is measured in docs/notes/.
    """
    for layer in module.modules():
        if isinstance(layer, nn.Conv2d | nn.Linear):
            nn.init.orthogonal_(layer.weight, gain=2 ** 0.5)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)


TORSO_INITS = {TorsoInit.lecun_bias: init_for_nonnegative_inputs,
               TorsoInit.orthogonal: init_orthogonal}


def background_level(obs: torch.Tensor) -> torch.Tensor:
    """Each observation's most common pixel value in its newest frame, in [0, 1], shaped to
    broadcast over the observation.

    Atari screens are mostly one flat colour (51-88 % of the pixels of Pong, Breakout, Space
    Invaders, Q*bert and Beam Rider), so the mode is that background, where the mean moves
    with whatever else is on the screen (Beam Rider's from 0.03 to 0.37 under random
    play). The newest frame alone: the stacked frames share their background, and one
    frame's count costs about what the mean of all four does.
    """
    newest = obs[..., -1, :, :].reshape(-1, obs.shape[-2] * obs.shape[-1]).long()
    counts = torch.zeros(newest.shape[0], 256, dtype=torch.int32, device=obs.device)
    counts.scatter_add_(1, newest, torch.ones_like(newest, dtype=torch.int32))
    level = counts.argmax(dim=1).float() * SCALE
    return level.view(*obs.shape[:-3], 1, 1, 1)




# (out channels, kernel, stride) of each conv layer
CONV_STACKS: dict[Conv, tuple[tuple[int, int, int], ...]] = {
    Conv.paper: ((16, 8, 4), (32, 4, 2)),  # Supp. 8, the DQN of Mnih et al. (2013)
    # the DQN of Mnih et al. (2015), the torso SB3's and cleanrl's Atari agents use (with
    # hidden 512): 1.3x the paper's parameters at hidden 256 (2.5x at 512), and a third
    # layer that sees finer detail
    Conv.nature: ((32, 8, 4), (64, 4, 2), (64, 3, 1)),
}


class ConvTorso(nn.Module):
    """The paper's torso: conv 16x8x8/4, conv 32x4x4/2, fc, ReLU after each (Supp. 8);
    ``conv="nature"`` puts the three convs of the Nature DQN in place of the two.

    Takes uint8 frames and scales them here, so rollouts store 1 byte per pixel. With
    ``centre_input`` each observation has its own mean pixel subtracted: on a screen of
    flat background an uncentred input makes every first-layer unit's gradient one-signed
    across its weights, so one update shifts its response at every position together
    (Pong, lr 3e-3: 1 % of the first layer still responding after 600k frames).
    ``centre_on="background"`` subtracts the screen's background (``background_level``)
    instead, so the background reads 0 in every game: black-background games (Breakout,
    Space Invaders, Q*bert, Beam Rider) keep the zero the mean would move, and Pong gets
    the zero its uncentred input lacks (docs/notes/).

    ``init`` names the weights' start (``TORSO_INITS``): ``lecun_bias`` (the default) or
    ``orthogonal`` (the Baselines Atari networks').

    With ``spatial_softmax`` the fc layer reads each last-conv channel's expected (x, y)
    (64 numbers) instead of the flattened maps (2,592 on Atari); with ``conv="nature"``
    128 numbers instead of 3,136.
    """

    def __init__(self, input_shape: tuple[int, ...], hidden: int = 256,
                 centre_input: bool = False, spatial_softmax: bool = False,
                 conv: str = "paper", init: str = "lecun_bias",
                 centre_on: str = "mean") -> None:
        super().__init__()
        if centre_on not in tuple(CentreOn):
            raise ValueError(f"centre_on={centre_on}: choose {' or '.join(CentreOn)}")
        self.centre_input = centre_input
        self.centre_on = centre_on
        channels, height, width = input_shape
        convs: list[nn.Module] = []
        in_channels = channels
        for out_channels, kernel, stride in CONV_STACKS[conv]:
            convs += [nn.Conv2d(in_channels, out_channels, kernel_size=kernel, stride=stride),
                      nn.ReLU()]
            in_channels = out_channels
        with torch.no_grad():
            maps = nn.Sequential(*convs)(torch.zeros(1, channels, height, width))
        last: nn.Module = (SpatialSoftmax(maps.shape[2], maps.shape[3]) if spatial_softmax
                           else nn.Flatten())
        self.conv = nn.Sequential(*convs, last)
        with torch.no_grad():
            flat = last(maps).shape[1]  # the last layer alone: the convs' maps are at hand
        self.fc = nn.Sequential(nn.Linear(flat, hidden), nn.ReLU())
        self.output_size = hidden
        TORSO_INITS[init](self)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(self.prepared(obs)))

    def prepared(self, obs: torch.Tensor) -> torch.Tensor:
        """What the first conv reads: the frames scaled to [0, 1] and, with
        ``centre_input``, less their mean or background, held channels-last."""
        if not self.centre_input or self.centre_on == "background":
            fused = scaled_screens(obs, centre=self.centre_input)
            if fused is not None:
                return fused
        # scaled in place: a second float batch costs a second round of fresh pages
        scaled = obs.to(torch.float32, copy=True).mul_(SCALE)
        if self.centre_input:  # in place: scaled is this call's own tensor
            scaled.sub_(background_level(obs) if self.centre_on == "background"
                        else scaled.mean(dim=(-3, -2, -1), keepdim=True))
        # oneDNN's convolutions, the backward above all, run 1.5-2.5x faster on pixels stored
        # channel-innermost once a batch holds more than one screen (docs/notes/)
        return scaled.contiguous(memory_format=torch.channels_last)


ACTIVATIONS: dict[Activation, type[nn.Module]] = {Activation.relu: nn.ReLU,
                                                  Activation.tanh: nn.Tanh}


class MLPTorso(nn.Module):
    """Fully connected layers (ReLU or tanh after each) for vector observations."""

    def __init__(self, input_size: int, layers: list[int], hidden: int = 256,
                 activation: str = "relu") -> None:
        super().__init__()
        modules: list[nn.Module] = []
        size = input_size
        for width in [*layers, hidden]:
            modules += [nn.Linear(size, width), ACTIVATIONS[activation]()]
            size = width
        self.net = nn.Sequential(*modules)
        self.output_size = hidden

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs.float())
