"""A run's directory behind one object: every file the launcher writes there.

``config.yaml`` (the run's config), ``status.json`` (what a reader sees while it runs),
``checkpoints/last.pt`` and, with ``checkpoint.keep``, a kept copy per checkpoint, the CSVs
and trackers (through the ``Recorder`` it opens), and ``learning_curve.png`` at the end.
The launcher decides when; this object knows where and how each is written.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from asyncrl.run_files.checkpoint import (
    Checkpoint,
    checkpoint_path,
    keep_copy,
    kept_checkpoint_path,
    save_checkpoint,
)
from asyncrl.run_files.plots import plot_learning_curve
from asyncrl.run_files.recorder import Recorder
from asyncrl.run_files.run_status import write_status
from asyncrl.run_files.trackers import open_trackers

log = logging.getLogger(__name__)

CONFIG_FILE = "config.yaml"


class RunDirectory:
    """The files of the run in ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @property
    def checkpoint(self) -> Path:
        """``checkpoints/last.pt``: what ``resume=`` goes on from."""
        return checkpoint_path(self.path)

    def write_config(self, config: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(OmegaConf.create(config), self.path / CONFIG_FILE)

    def open_recorder(self, score_window: int, metrics: Sequence[str],
                      resume_frames: int | None, log_cfg: Any,
                      config: dict[str, Any]) -> Recorder:
        """The CSVs and the trackers (TensorBoard, W&B); a resumed run's rows after its T
        dropped."""
        return Recorder(self.path, score_window, list(metrics), resume_frames,
                        open_trackers(self.path, log_cfg, config, resume_frames))

    def write_status(self, status: str, **fields: Any) -> None:
        write_status(self.path, status, **fields)

    def save_checkpoint(self, checkpoint: Checkpoint, keep: bool) -> Path:
        """``last.pt`` replaced whole (an OSError leaves the old one); with ``keep`` a copy
        named by T as well, whose failure only loses that copy (said in the log)."""
        path = self.checkpoint
        save_checkpoint(path, checkpoint)
        if keep:
            kept = kept_checkpoint_path(self.path, checkpoint.frames)
            try:
                keep_copy(path, kept)
            except OSError as error:
                # last.pt is whole, so the run can go on and resume; only this copy is lost
                log.warning("could not keep the checkpoint at T=%s as %s: %s",
                            f"{checkpoint.frames:,}", kept, error.strerror or error)
        return path

    def plot_learning_curve(self, title: str, window: int) -> None:
        plot_learning_curve(self.path, title, window)
