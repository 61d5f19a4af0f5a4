"""Where a run's scalars go besides its CSV files: TensorBoard (the default) and, with
``log.wandb=true``, Weights & Biases. Each tracker gets the same values at the same T."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from typing import Any, Protocol

from asyncrl.errors import UserError

WANDB_EXTRA = "pip install 'asyncrl[wandb]'"
WANDB_ID_FILE = "wandb_run_id"  # in the run directory: a resumed run goes on in the same W&B run


class Tracker(Protocol):
    def log(self, values: dict[str, float], frames: int) -> None: ...

    def close(self) -> None: ...


def check_wandb_installed() -> None:
    """Refuse ``log.wandb=true`` before anything starts where wandb is not installed."""
    if importlib.util.find_spec("wandb") is None:
        raise UserError(f"log.wandb=true needs the wandb package: {WANDB_EXTRA}")


class TensorBoard:
    """Event files under ``tb/``; a resumed run drops the points logged after its checkpoint."""

    def __init__(self, run_dir: Path, resume_frames: int | None) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(run_dir / "tb"),
                                    purge_step=None if resume_frames is None
                                    else resume_frames + 1)

    def log(self, values: dict[str, float], frames: int) -> None:
        for tag, value in values.items():
            self.writer.add_scalar(tag, value, frames)

    def close(self) -> None:
        self.writer.close()


class WandB:
    """One W&B run per asyncrl run, its x-axis T (``frames``).

    Workers report out of order in T, and W&B drops a point whose ``step`` goes back, so T
    is logged as a metric of its own that every other metric is plotted against. W&B cannot
    take back points, so a run resumed after a crash shows the frames after its last
    checkpoint twice there (the CSVs and TensorBoard drop them).
    """

    def __init__(self, run_dir: Path, project: str, config: dict[str, Any]) -> None:
        import wandb

        id_file = run_dir / WANDB_ID_FILE
        run_id = id_file.read_text().strip() if id_file.exists() else uuid.uuid4().hex[:16]
        id_file.write_text(run_id + "\n")
        self.run = wandb.init(project=project, dir=str(run_dir), config=config,
                              name=run_dir.name, id=run_id, resume="allow")
        self.run.define_metric("frames")
        self.run.define_metric("*", step_metric="frames")

    def log(self, values: dict[str, float], frames: int) -> None:
        self.run.log({**values, "frames": frames})

    def close(self) -> None:
        self.run.finish()


def open_trackers(run_dir: Path, log_cfg: Any, config: dict[str, Any],
                  resume_frames: int | None) -> list[Tracker]:
    """The trackers ``log.tensorboard`` and ``log.wandb`` ask for."""
    trackers: list[Tracker] = []
    if log_cfg.tensorboard:
        trackers.append(TensorBoard(run_dir, resume_frames))
    if log_cfg.wandb:
        trackers.append(WandB(run_dir, log_cfg.wandb_project, config))
    return trackers
