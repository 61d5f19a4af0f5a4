"""Checks of the options beyond the paper (docs/options.md): each value's range, and the
combinations that cannot work. Keys an algorithm or network does not take at all are
refused when the config composes, with the reason its schema gives (``refused``)."""

from __future__ import annotations

from typing import Any

from asyncrl.choices import CentreOn, Conv, TorsoInit
from asyncrl.config.schemas import FFNetworkConfig, keys_of
from asyncrl.errors import UserError

# a segment holds t_max + 1 observations: on Atari 6 x 28 KB, so 1,000 segments are
# ~170 MB per worker, and the cap's 100,000 ~17 GB: it keeps a typo from asking for the
# machine's whole memory
MAX_REPLAY_CAPACITY = 100_000
MAX_REPLAY_RATIO = 16  # each replayed segment costs a forward and backward like a new one


def check_options(cfg: Any, observes_images: bool | None) -> None:
    """Raise UserError for an option's impossible value or combination."""
    for key in sorted({"gae_lambda", "lambda_return"} & keys_of(cfg.algo)):
        value = getattr(cfg.algo, key)
        if not 0.0 <= value <= 1.0:
            raise UserError(f"algo.{key}={value}: must lie in [0, 1] (1 is the paper's "
                            "n-step return)")
    _check_replay(cfg.algo)
    if not isinstance(cfg.network, FFNetworkConfig):  # network=gaussian has none of these
        return
    if cfg.network.dueling and cfg.algo.name == "a3c":
        raise UserError("network.dueling=true splits a Q head into value and advantage "
                        "streams; algo=a3c has a policy and a value head instead. Use a "
                        "value-based algo (one_step_q, one_step_sarsa, nstep_q)")
    if cfg.network.spatial_softmax and observes_images is False:
        raise UserError("network.spatial_softmax=true reads the positions of features in an "
                        "image, and this environment's observations are vectors")
    conv = cfg.network.conv
    if conv != Conv.paper and observes_images is False:
        raise UserError(f"network.conv={conv} picks the conv layers for images, and this "
                        "environment's observations are vectors (network.mlp_layers sets "
                        "their torso)")
    init = cfg.network.torso_init
    if init != TorsoInit.lecun_bias and observes_images is False:
        raise UserError(f"network.torso_init={init} starts the conv torso for images, and "
                        "this environment's observations are vectors")
    centre_on = cfg.network.centre_on
    if centre_on != CentreOn.mean and not cfg.network.centre_input:
        raise UserError(f"network.centre_on={centre_on} says what centring subtracts, and "
                        "network.centre_input=false turns centring off (the default A3C "
                        "setting on Atari sets centre_on=background: add "
                        "network.centre_on=mean, or setting=base)")
    if centre_on != CentreOn.mean and observes_images is False:
        raise UserError(f"network.centre_on={centre_on} centres images, and this "
                        "environment's observations are vectors")


def _check_replay(algo: Any) -> None:
    capacity, ratio = algo.replay_capacity, algo.replay_ratio  # 0 where the algorithm has none
    if not 0 <= capacity <= MAX_REPLAY_CAPACITY:
        raise UserError(f"algo.replay_capacity={capacity}: must lie in "
                        f"[0, {MAX_REPLAY_CAPACITY:,}] segments per worker (0: no replay)")
    if not 0 <= ratio <= MAX_REPLAY_RATIO:
        raise UserError(f"algo.replay_ratio={ratio}: must lie in [0, {MAX_REPLAY_RATIO}] "
                        "replayed segments per on-policy one")
    if (capacity == 0) != (ratio == 0):
        raise UserError(f"algo.replay_capacity={capacity} with algo.replay_ratio={ratio}: "
                        "replay needs both, a memory and segments replayed from it (or "
                        "neither)")
