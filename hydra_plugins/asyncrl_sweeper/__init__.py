"""Hydra accepts sweepers only from the ``hydra_plugins`` package; the sweep itself is
written in ``asyncrl.sweep``, which never imports this package (no import circle)."""

from hydra.core.config_store import ConfigStore
from hydra.core.plugins import Plugins

from asyncrl.sweep import LogUniformSweeperBase, LogUniformSweeperConf


class LogUniformSweeper(LogUniformSweeperBase):
    """``hydra/sweeper=asyncrl_loguniform``: see ``asyncrl.sweep``."""


def register_sweeper() -> None:
    """The sweeper and its config, registered by ``asyncrl.compose.register_schemas`` rather
    than left to Hydra's scan of this package."""
    Plugins.instance().register(LogUniformSweeper)
    ConfigStore.instance().store(group="hydra/sweeper", name="asyncrl_loguniform",
                                 node=LogUniformSweeperConf, provider="asyncrl")
