"""The live panel in a real terminal: one panel, updated in place, nothing left behind.

The CLI runs on a pseudo-terminal of 120x30 and its output is played into a VT100 emulator
(pyte), scrollback included, the way a terminal window would show it.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte

from tests.conftest import cli_env

COLUMNS, ROWS = 120, 30


def run_on_a_terminal(args: list[str], cwd: Path, timeout: float = 300) -> tuple[int, bytes]:
    """``python -m asyncrl ARGS`` with stdin, stdout and stderr on a fresh pty."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {**cli_env(), "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
    proc = subprocess.Popen([sys.executable, "-m", "asyncrl", *args], cwd=cwd, env=env,
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed its end
                    break
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, bytes(output)


def terminal_lines(output: bytes) -> list[str]:
    """What the window and its scrollback hold once the output has been played."""
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=10_000)
    stream = pyte.ByteStream(screen)
    stream.feed(output.replace(b"\n", b"\r\n"))  # the pty's onlcr, which the bytes lack
    history = ["".join(line[x].data for x in range(COLUMNS)).rstrip()
               for line in screen.history.top]
    return history + [line.rstrip() for line in screen.display]


def test_the_live_panel_stays_in_place_and_leaves_no_copies(tmp_path):
    run_dir = tmp_path / "run"
    code, output = run_on_a_terminal(
        ["env=classic/cartpole", "workers=2", "total_frames=40000", "log.interval_seconds=0.2",
         "eval.interval_frames=10000", "eval.episodes=1", "log.tensorboard=false",
         f"hydra.run.dir={run_dir}"], tmp_path)
    lines = terminal_lines(output)
    text = "\n".join(lines)
    assert code == 0, text
    titles = [ln for ln in lines if "asyncrl a3c on gym/CartPole-v1 (2 workers)" in ln
              and "frames" not in ln]
    assert len(titles) == 1, text  # one panel, however many refreshes
    assert len([ln for ln in lines if ln.strip().startswith("frames ")]) == 1, text
    # the panel's last refresh shows the end: T at or past the 40,000 frames asked for
    (row,) = [ln for ln in lines if ln.strip().startswith("frames ")]
    done, total = re.search(r"frames\s+([\d,]+) / ([\d,]+)", row).groups()
    assert total == "40,000" and int(done.replace(",", "")) >= 40_000, row
    # what the run says besides the panel is printed once, above it
    assert len([ln for ln in lines if "evaluation at T=" in ln]) >= 1, text
    assert "Traceback" not in text
