"""`asyncrl-torcs install`: Debian's TORCS, its headers, and our driver module, built.

Steps, each skipped when already done:
1. the Debian packages ``torcs`` (the game, its robots and data), ``libplib-dev`` (a header
   TORCS's headers include) and ``g++``;
2. TORCS's headers, from the Debian source package (only the few header files are kept);
3. the driver module, compiled against them;
4. a module tree for TORCS (Debian's libraries, modules and robots, plus ours), in
   ``$ASYNCRL_TORCS_HOME`` or ``~/.local/share/asyncrl/torcs``, so nothing under /usr changes.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tarfile
import tempfile
from importlib import resources
from pathlib import Path

from asyncrl.envs.torcs.paths import (
    DATA_DIR,
    DRIVER_NAME,
    TorcsPaths,
    system_libdir,
    torcs_home,
)
from asyncrl.errors import UserError

PACKAGES = ("torcs", "libplib-dev", "g++")
SOURCE_LIST = Path("/etc/apt/sources.list.d/asyncrl-torcs-src.sources")
# header -> where TORCS's own build exports it (the includes say <tmath/...>)
HEADERS = {
    "src/interfaces/": "",
    "src/libs/tgf/tgf.h": "",
    "src/libs/robottools/robottools.h": "",
    "src/linux/osspec.h": "",
    "src/libs/math/": "tmath/",
}


def log(message: str) -> None:
    print(f"asyncrl-torcs: {message}", flush=True)


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise UserError(f"{what} failed ({' '.join(command[:3])} ...): {' | '.join(tail)}")


def _apt_get(*args: str, what: str) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    result = subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-2:]
        raise UserError(f"{what} failed: {' | '.join(tail)}")


def missing_packages() -> list[str]:
    missing = []
    if system_libdir() is None or not DATA_DIR.is_dir():
        missing.append("torcs")
    if not Path("/usr/include/plib/sg.h").exists():
        missing.append("libplib-dev")
    if shutil.which("g++") is None:
        missing.append("g++")
    return missing


def install_packages() -> None:
    missing = missing_packages()
    if not missing:
        return
    if os.geteuid() != 0:
        raise UserError(f"installing {', '.join(missing)} needs root: run `sudo apt-get "
                        f"install {' '.join(missing)}`, then `asyncrl-torcs install` again")
    log(f"installing Debian packages: {', '.join(missing)}")
    _apt_get("update", "-qq", what="apt-get update")
    _apt_get("install", "-y", "-qq", *missing, what=f"apt-get install {' '.join(missing)}")


def _deb_src_stanzas() -> str:
    """The machine's Debian sources as deb-src entries (deb822), for apt-get source."""
    stanzas = []
    for source in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for block in source.read_text().split("\n\n"):
            lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
            if any(ln.strip() == "Types: deb" for ln in lines) and any(
                    "debian.org" in ln for ln in lines):
                stanzas.append("\n".join("Types: deb-src" if ln.startswith("Types:") else ln
                                         for ln in lines))
    classic = Path("/etc/apt/sources.list")
    if classic.exists():
        for line in classic.read_text().splitlines():
            if line.startswith("deb ") and "debian.org" in line:
                words = line.split()
                uri, suite, comps = words[1], words[2], " ".join(words[3:])
                stanzas.append(f"Types: deb-src\nURIs: {uri}\nSuites: {suite}\n"
                               f"Components: {comps}")
    if not stanzas:
        raise UserError("found no Debian package source to fetch TORCS's source package from")
    return "\n\n".join(stanzas) + "\n"


def _let_apt_download_into(folder: str) -> None:
    """Give the folder to apt's download user (``_apt``), mode 0700 as mkdtemp made it.

    apt downloads as ``_apt`` when it can write the folder, else as root with a warning. A
    world-writable folder in /tmp (0777, no sticky bit) would let any local user swap the
    tarball that the driver module is then built against, as root.
    """
    try:
        apt_user = pwd.getpwnam("_apt")
    except KeyError:
        return
    if os.geteuid() == 0:
        os.chown(folder, apt_user.pw_uid, -1)


def fetch_headers(include: Path) -> None:
    """TORCS's robot headers, out of the Debian source package's tarball."""
    if os.geteuid() != 0 and not SOURCE_LIST.exists():
        raise UserError("fetching TORCS's headers adds a deb-src entry and needs root once")
    if os.geteuid() == 0:
        SOURCE_LIST.write_text(_deb_src_stanzas())
        _apt_get("update", "-qq", what="apt-get update (deb-src)")
    with tempfile.TemporaryDirectory(prefix="asyncrl-torcs-src-") as tmp:
        _let_apt_download_into(tmp)
        log("downloading TORCS's source package (~390 MB, only the headers are kept)")
        result = subprocess.run(["apt-get", "source", "--download-only", "torcs"], cwd=tmp,
                                capture_output=True, text=True)
        tarballs = sorted(Path(tmp).glob("torcs_*.orig.tar.*"))
        if result.returncode != 0 or not tarballs:
            tail = result.stderr.strip().splitlines()[-2:]
            raise UserError(f"apt-get source torcs failed: {' | '.join(tail)}")
        staging = include.with_name(include.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "tmath").mkdir(parents=True)
        with tarfile.open(tarballs[0]) as tar:
            for member in tar:
                if not member.isfile() or not member.name.endswith(".h"):
                    continue
                relative = member.name.split("/", 1)[-1]
                for prefix, target in HEADERS.items():
                    inside = relative[len(prefix):] if prefix.endswith("/") else ""
                    if relative == prefix or (prefix.endswith("/") and relative.startswith(prefix)
                                              and "/" not in inside):
                        source = tar.extractfile(member)
                        assert source is not None
                        name = Path(relative).name
                        (staging / target / name).write_bytes(source.read())
        if not (staging / "robot.h").exists():
            raise UserError(f"{tarballs[0].name} holds no src/interfaces/robot.h")
        shutil.rmtree(include, ignore_errors=True)
        staging.rename(include)


def build_driver(paths: TorcsPaths) -> None:
    source = resources.files("asyncrl.envs.torcs") / "driver" / f"{DRIVER_NAME}.cpp"
    paths.driver.parent.mkdir(parents=True, exist_ok=True)
    partial = paths.driver.with_suffix(".so.partial")
    with resources.as_file(source) as cpp:
        _run(["g++", "-O2", "-fPIC", "-shared", "-Wall", "-Wno-unused-parameter",
              "-I", str(paths.include), str(cpp), "-o", str(partial)],
             "building the driver module")
    partial.rename(paths.driver)


def link_modules(paths: TorcsPaths) -> None:
    """Debian's library directory, mirrored with symlinks, with our driver beside its robots."""
    drivers = paths.modules / "drivers"
    drivers.mkdir(parents=True, exist_ok=True)
    for name in ("lib", "modules"):
        link = paths.modules / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(paths.system / name)
    for robot in sorted((paths.system / "drivers").iterdir()):
        link = drivers / robot.name
        if robot.name == DRIVER_NAME:
            continue
        if link.is_symlink():
            link.unlink()
        link.symlink_to(robot)


def install(rebuild: bool = False) -> TorcsPaths:
    install_packages()
    system = system_libdir()
    assert system is not None
    paths = TorcsPaths(torcs_home(), system)
    if rebuild or not (paths.include / "robot.h").exists():
        fetch_headers(paths.include)
    log(f"building the driver module into {paths.driver}")
    build_driver(paths)
    link_modules(paths)
    return paths
