"""Hydra accepts sweepers only from the ``hydra_plugins`` package; the sweep itself is
written in ``asyncrl.sweep``."""

from asyncrl.sweep import LogUniformSweeperBase


class LogUniformSweeper(LogUniformSweeperBase):
    """``hydra/sweeper=asyncrl_loguniform``: see ``asyncrl.sweep``."""
