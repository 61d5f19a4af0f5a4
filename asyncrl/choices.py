"""The keys whose values are a choice of names: each is its type, which OmegaConf checks
(``network.conv=resnet`` is refused with the names it allows), and the network builder
keys its tables by the same type. No torch here: the config's check uses these."""

from __future__ import annotations

from enum import StrEnum


class Conv(StrEnum):
    """``network.conv``: the image torso's conv layers."""

    paper = "paper"    # two layers, the DQN of Mnih et al. (2013) (paper, Supp. 8)
    nature = "nature"  # three layers, the DQN of Mnih et al. (2015)


class TorsoInit(StrEnum):
    """``network.torso_init``: how the conv torso's weights start."""

    lecun_bias = "lecun_bias"  # LeCun-uniform weights, biases a small positive constant
    orthogonal = "orthogonal"  # orthogonal weights with ReLU gain, zero biases


class CentreOn(StrEnum):
    """``network.centre_on``: what ``network.centre_input`` subtracts from each screen."""

    mean = "mean"
    background = "background"  # the newest frame's most common value


class Activation(StrEnum):
    """``network.mlp_activation``: the MLP torso's nonlinearity."""

    relu = "relu"
    tanh = "tanh"
