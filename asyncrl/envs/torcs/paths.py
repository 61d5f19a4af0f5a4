"""Where TORCS and our driver module live on this machine."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from asyncrl.errors import UserError

DATA_DIR = Path("/usr/share/games/torcs")
DRIVER_NAME = "asyncrl"
SETUP_COMMAND = "asyncrl-torcs install"


def torcs_home() -> Path:
    """Our build of the driver and the module tree TORCS loads it from."""
    configured = os.environ.get("ASYNCRL_TORCS_HOME")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "asyncrl" / "torcs"


def system_libdir() -> Path | None:
    """Debian's TORCS library directory (torcs-bin, lib/, modules/, drivers/), if installed."""
    found = sorted(glob.glob("/usr/lib/*/torcs/torcs-bin")) + sorted(
        glob.glob("/usr/lib/torcs/torcs-bin"))
    return Path(found[0]).parent if found else None


@dataclass(frozen=True)
class TorcsPaths:
    home: Path
    system: Path

    @property
    def binary(self) -> Path:
        return self.system / "torcs-bin"

    @property
    def data(self) -> Path:
        return DATA_DIR

    @property
    def include(self) -> Path:
        return self.home / "include"

    @property
    def modules(self) -> Path:
        """What TORCS gets as its library directory: Debian's, plus our driver."""
        return self.home / "modules"

    @property
    def driver(self) -> Path:
        return self.modules / "drivers" / DRIVER_NAME / f"{DRIVER_NAME}.so"

    @property
    def shared_libs(self) -> Path:
        return self.system / "lib"


def require_torcs() -> TorcsPaths:
    """The paths of a complete setup, or a UserError naming the setup command."""
    system = system_libdir()
    if system is None or not DATA_DIR.is_dir():
        raise UserError(f"TORCS is not installed: run `{SETUP_COMMAND}` (it installs Debian's "
                        "torcs package and builds asyncrl's driver module)")
    paths = TorcsPaths(torcs_home(), system)
    if not paths.driver.is_file():
        raise UserError(f"asyncrl's TORCS driver module is not built ({paths.driver} is "
                        f"missing): run `{SETUP_COMMAND}`")
    return paths
