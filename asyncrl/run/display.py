"""The console view of a run: frames done, speed, ETA, recent scores."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table


@dataclass
class Progress:
    frames: int
    total: int
    frames_per_second: float
    recent_score: float | None
    episodes: int
    last_eval: float | None
    workers_alive: int
    workers: int

    def eta_seconds(self) -> float | None:
        if self.frames_per_second <= 0:
            return None
        return max(0.0, (self.total - self.frames) / self.frames_per_second)

    def line(self) -> str:
        """One plain line, for logs and for consoles that are not terminals."""
        score = "-" if self.recent_score is None else f"{self.recent_score:.2f}"
        return (f"T={self.frames:,}/{self.total:,} ({100 * self.frames / self.total:.1f}%) "
                f"{self.frames_per_second:,.0f} frames/s ETA {format_duration(self.eta_seconds())}"
                f" episodes={self.episodes} recent score={score}")


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class LiveDisplay:
    """A rich live panel on a terminal; nothing at all when stdout is not one."""

    def __init__(self, title: str, enabled: bool) -> None:
        self.title = title
        self.enabled = enabled and sys.stdout.isatty()
        self._live: Live | None = None
        self._moved: list[tuple[logging.StreamHandler[Any], Any]] = []

    @property
    def live(self) -> bool:
        return self._live is not None

    def __enter__(self) -> LiveDisplay:
        if self.enabled:
            self._live = Live(Table(), console=Console(), refresh_per_second=2, transient=False)
            self._live.__enter__()
            self._print_logs_above_the_panel()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            for handler, stream in self._moved:
                handler.setStream(stream)
            self._moved = []
            self._live.__exit__(None, None, None)
            self._live = None

    def _print_logs_above_the_panel(self) -> None:
        """Point the console's log handlers at rich's stand-ins for stdout and stderr.

        Hydra's handler holds the terminal's own stream, written before the panel existed: a
        line written there under the live panel moves the screen, and each later refresh
        leaves a copy of the panel's top lines behind. Through rich's stand-in the line is
        printed above the panel instead.
        """
        self._moved = []
        proxies = {id(sys.__stdout__): sys.stdout, id(sys.__stderr__): sys.stderr}
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.FileHandler) or not isinstance(
                    handler, logging.StreamHandler):
                continue
            proxy = proxies.get(id(handler.stream))
            if proxy is not None and proxy is not handler.stream:
                self._moved.append((handler, handler.setStream(proxy)))

    def show(self, p: Progress) -> None:
        if self._live is None:
            return
        table = Table(title=self.title, show_header=False, box=None, min_width=len(self.title))
        table.add_column(style="bold cyan")
        table.add_column()
        table.add_row("frames", f"{p.frames:,} / {p.total:,} ({100 * p.frames / p.total:.1f}%)")
        table.add_row("speed", f"{p.frames_per_second:,.0f} frames/s")
        table.add_row("ETA", format_duration(p.eta_seconds()))
        score = "-" if p.recent_score is None else f"{p.recent_score:.2f}"
        table.add_row("recent score", f"{score} (episodes: {p.episodes})")
        if p.last_eval is not None:
            table.add_row("last evaluation", f"{p.last_eval:.2f}")
        table.add_row("workers", f"{p.workers_alive} / {p.workers} alive")
        self._live.update(table)
