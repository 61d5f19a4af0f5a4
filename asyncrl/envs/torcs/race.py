"""One TORCS race in a process of its own, run headless from a race file.

Every race gets a fresh TORCS process (it starts in well under a second), its own
temporary configuration directory and its own port, so workers never share anything of TORCS's.
An episode's end kills the process: stock TORCS has no way to restart a race from a driver.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from asyncrl.envs.torcs.paths import DRIVER_NAME, TorcsPaths
from asyncrl.envs.torcs.protocol import (
    PORT_ENV,
    SECRET_BYTES,
    SECRET_ENV,
    DriverGone,
    DriverLink,
    NotOurDriver,
    TrackGeometry,
)

GREETING_SECONDS = 5.0


@dataclass(frozen=True)
class RaceSpec:
    """What TORCS races: the track, our car, the opponents (``module/index`` of TORCS's own
    robots, e.g. ``bt/2``) and the number of laps."""

    track: str
    category: str
    car: str
    opponents: tuple[str, ...] = ()
    laps: int = 1


@dataclass(frozen=True)
class Opponent:
    module: str
    index: int

    @staticmethod
    def parse(text: str) -> Opponent:
        module, _, index = text.partition("/")
        if not module or not index.isdigit():
            raise ValueError(f"opponent '{text}' is not of the form module/index (e.g. bt/2)")
        return Opponent(module, int(index))


def _param_file(name: str, body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<params name={quoteattr(name)} type="param" mode="mw">\n{body}</params>\n')


def race_xml(spec: RaceSpec) -> str:
    """A quick race file for ``torcs-bin -r``: our driver first on the grid, then the bots.

    TORCS gets one lap more than the episode needs, so that the race itself never ends
    before the environment does."""
    drivers = [f'  <section name="1"><attnum name="idx" val="0"/>'
               f'<attstr name="module" val="{DRIVER_NAME}"/></section>']
    for k, text in enumerate(spec.opponents, start=2):
        bot = Opponent.parse(text)
        drivers.append(f'  <section name="{k}"><attnum name="idx" val="{bot.index}"/>'
                       f'<attstr name="module" val={quoteattr(bot.module)}/></section>')
    body = f"""<section name="Header"><attstr name="name" val="asyncrl race"/></section>
<section name="Tracks"><attnum name="maximum number" val="1"/>
  <section name="1"><attstr name="name" val={quoteattr(spec.track)}/>
  <attstr name="category" val={quoteattr(spec.category)}/></section>
</section>
<section name="Races"><section name="1"><attstr name="name" val="Quick Race"/></section></section>
<section name="Quick Race">
  <attnum name="distance" val="0"/><attstr name="type" val="race"/>
  <attstr name="starting order" val="drivers list"/><attstr name="restart" val="yes"/>
  <attnum name="laps" val="{spec.laps + 1}"/>
  <section name="Starting Grid"><attnum name="rows" val="2"/>
    <attnum name="distance to start" val="25"/><attnum name="distance between columns" val="20"/>
    <attnum name="offset within a column" val="10"/><attnum name="initial speed" val="0"/>
    <attnum name="initial height" val="0.2"/></section>
</section>
<section name="Drivers"><attnum name="maximum number" val="40"/>
{chr(10).join(drivers)}
</section>
"""
    return _param_file("asyncrl race", body)


def driver_xml(car: str) -> str:
    """The robot description TORCS reads for our driver: it names the car we drive."""
    body = f"""<section name="Robots"><section name="index"><section name="0">
  <attstr name="name" val="{DRIVER_NAME}"/><attstr name="team" val="{DRIVER_NAME}"/>
  <attstr name="author" val="{DRIVER_NAME}"/><attstr name="car name" val={quoteattr(car)}/>
  <attnum name="race number" val="1"/>
</section></section></section>
"""
    return _param_file(DRIVER_NAME, body).replace('type="param" mode="mw"', 'type="robotdef"')


def accept_driver(server: socket.socket, secret: bytes, timeout: float) -> DriverLink:
    """The first connection to ``server`` that presents ``secret`` within ``timeout``
    seconds; any other is closed unread beyond its greeting."""
    deadline = time.monotonic() + timeout
    strangers = 0
    while (left := deadline - time.monotonic()) > 0:
        server.settimeout(left)
        try:
            conn, _ = server.accept()
        except TimeoutError:
            break
        # the driver greets as soon as it connects; a silent stranger gets a few seconds
        link = DriverLink(conn, min(left, GREETING_SECONDS))
        try:
            link.greet(secret)
        except NotOurDriver:
            link.close()
            strangers += 1
            continue
        except DriverGone:
            link.close()
            raise
        link.conn.settimeout(timeout)
        return link
    refused = f" ({strangers} connection(s) without the race's secret refused)" if strangers else ""
    raise DriverGone(f"TORCS did not start a race within {timeout:.0f} s{refused}")


@dataclass
class TorcsRace:
    """A running TORCS process and the connection to our driver inside it."""

    paths: TorcsPaths
    spec: RaceSpec
    timeout: float = 20.0
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    link: DriverLink | None = field(default=None, init=False)
    _local: Path | None = field(default=None, init=False)

    def start(self) -> TrackGeometry:
        """Launch TORCS, wait for our driver to connect and read the track."""
        self.stop()
        local = self._make_local_dir()
        secret = secrets.token_bytes(SECRET_BYTES)
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            server.bind(("127.0.0.1", 0))  # the OS picks a free port: one per race
            server.listen(8)  # our driver queues while a stranger's connection is dropped
            env = dict(os.environ, **{PORT_ENV: str(server.getsockname()[1]),
                                      SECRET_ENV: secret.hex()})
            env["LD_LIBRARY_PATH"] = ":".join(
                p for p in (str(self.paths.shared_libs), os.environ.get("LD_LIBRARY_PATH")) if p)
            with open(local / "torcs.log", "wb") as log:
                self.process = subprocess.Popen(
                    [str(self.paths.binary), "-l", f"{local}/", "-L", f"{self.paths.modules}/",
                     "-D", f"{self.paths.data}/", "-r", str(local / "race.xml")],
                    cwd=self.paths.data, env=env, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                self.link = accept_driver(server, secret, self.timeout)
            except DriverGone as exc:
                output = self.log_tail()
                self.stop()  # a TORCS that never connected must not outlive the attempt
                raise DriverGone(f"{exc}; its output: {output}") from exc
        finally:
            server.close()
        try:
            return self.link.receive_track()
        except DriverGone:
            self.stop()
            raise

    def _make_local_dir(self) -> Path:
        """TORCS's per-user directory, private to this race and removed with it: configs,
        our robot file, and the results TORCS writes at the end."""
        self._local = Path(tempfile.mkdtemp(prefix="asyncrl-torcs-"))
        config = self._local / "config"
        config.mkdir()
        shutil.copy(self.paths.data / "config" / "raceengine.xml", config / "raceengine.xml")
        robot = self._local / "drivers" / DRIVER_NAME
        robot.mkdir(parents=True)
        (robot / f"{DRIVER_NAME}.xml").write_text(driver_xml(self.spec.car))
        (self._local / "race.xml").write_text(race_xml(self.spec))
        return self._local

    def log_tail(self, lines: int = 5) -> str:
        log = None if self._local is None else self._local / "torcs.log"
        if log is None or not log.exists():
            return "(no output)"
        text = log.read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:]) or "(no output)"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Kill the TORCS process group and remove its directory; nothing of a race
        outlives it."""
        if self.link is not None:
            self.link.close()
            self.link = None
        if self.process is not None:
            if self.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None
        if self._local is not None:
            shutil.rmtree(self._local, ignore_errors=True)
            self._local = None

    def close(self) -> None:
        self.stop()
