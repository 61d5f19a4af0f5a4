"""Hydra accepts sweepers only from the ``hydra_plugins`` package; the sweep itself is
written in ``asyncrl.run.sweep``, which never imports this package (no import circle)."""

from hydra.core.config_store import ConfigStore
from hydra.core.plugins import Plugins

from asyncrl.run.sweep import GridSweeperConf, LogUniformSweeperBase, LogUniformSweeperConf


class LogUniformSweeper(LogUniformSweeperBase):
    """``hydra/sweeper=asyncrl_loguniform``: see ``asyncrl.run.sweep``."""


def register_sweeper() -> None:
    """The sweeper and its config, registered by ``asyncrl.config.compose.register_schemas`` rather
    than left to Hydra's scan of this package."""
    Plugins.instance().register(LogUniformSweeper)
    ConfigStore.instance().store(group="hydra/sweeper", name="asyncrl_loguniform",
                                 node=LogUniformSweeperConf, provider="asyncrl")
    # the same sweeper with nothing drawn: its conf's param is None
    ConfigStore.instance().store(group="hydra/sweeper", name="asyncrl_grid",
                                 node=GridSweeperConf, provider="asyncrl")
