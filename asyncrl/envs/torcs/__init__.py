"""TORCS car racing: a driver module inside real TORCS, steered by a worker over a socket."""

from asyncrl.envs.torcs.race import RaceSpec

__all__ = ["RaceSpec", "TorcsEnv"]


def __getattr__(name: str):  # noqa: ANN202 - the env pulls in numba; import it on demand
    if name == "TorcsEnv":
        from asyncrl.envs.torcs.env import TorcsEnv

        return TorcsEnv
    raise AttributeError(name)
