"""Checkpoints: the one module that knows their format. ``save_checkpoint`` writes a
``Checkpoint`` atomically; ``load_checkpoint`` reads one back, checks it, brings an older
format up to date, and refuses a missing, corrupt or foreign file in one line.

torch's zip container does not check its records' CRCs when it reads: a flipped byte in a
tensor loads as a silently different weight. So every checkpoint carries a SHA-256 of its
contents, and one whose contents do not match is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from asyncrl.errors import UserError

FORMAT_VERSION = 1
REQUIRED_KEYS = ("format", "model", "optimizer", "frames", "wall_time", "generation", "config")
DIGEST_KEY = "sha256"  # absent from checkpoints written before it existed: those load unchecked


@dataclass
class Checkpoint:
    """A run's state at T = ``frames``: enough to resume it or to play its policy."""

    model: dict[str, Any]  # the shared model's state_dict
    optimizer: dict[str, Any]  # the shared optimizer's statistics
    frames: int  # T
    wall_time: float  # seconds of training so far, over every session of the run
    generation: int  # how many times the run was resumed before this session
    config: dict[str, Any]  # the resolved config, as plain containers
    target: dict[str, Any] | None = None  # theta^- of the value-based methods
    target_epoch: int = 0  # T // target interval at the last refresh of theta^-
    torch_rng: Any = None  # the launcher's torch RNG state

    def target_or_model(self) -> dict[str, Any]:
        """theta^-, or theta for a checkpoint of a run that had no target network yet."""
        return self.target if self.target is not None else self.model


_FIELDS = {f.name for f in fields(Checkpoint)}


def _migrated(payload: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``payload``, a checkpoint of format ``FORMAT_VERSION`` or older.

    Format 1 is the only one so far; keys added to it later (target, target_epoch,
    torch_rng, the digest) take their defaults when absent. A later format bumps
    ``FORMAT_VERSION`` and converts the older layout here.
    """
    return {key: value for key, value in payload.items() if key in _FIELDS}


def content_digest(payload: Any) -> str:
    """SHA-256 over every tensor's bytes, dtype and shape and every other value's repr,
    walking dicts (and a ``Checkpoint``'s fields) in key order: equal for equal contents,
    whatever the container."""
    import torch

    digest = hashlib.sha256()

    def feed(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            flat = value.detach().cpu().contiguous().reshape(-1)
            digest.update(f"T{flat.dtype}{tuple(value.shape)}:".encode())
            digest.update(flat.view(torch.uint8).numpy().data)  # the buffer, not a copy
        elif isinstance(value, Checkpoint):
            feed({f.name: getattr(value, f.name) for f in fields(Checkpoint)})
        elif isinstance(value, dict):
            digest.update(b"{")
            for key in sorted(value, key=repr):
                feed(key)
                feed(value[key])
            digest.update(b"}")
        elif isinstance(value, list | tuple):
            digest.update(b"[")
            for item in value:
                feed(item)
            digest.update(b"]")
        else:
            digest.update(f"{type(value).__name__}:{value!r};".encode())

    feed(payload)
    return digest.hexdigest()


def checkpoint_path(run_dir: Path) -> Path:
    return Path(run_dir) / "checkpoints" / "last.pt"


def checkpoint_source(source: Path) -> tuple[Path, Path]:
    """What a command given a run directory or a checkpoint file reads: the checkpoint file,
    and the folder of the run's other files (the run directory; for a file in a run's
    ``checkpoints/``, the run directory above it; for any other file, its own folder)."""
    source = Path(source)
    if source.is_dir():
        return checkpoint_path(source), source
    if not source.is_file():
        raise UserError(f"no run directory or checkpoint at {source}")
    return source, source.parent.parent if source.parent.name == "checkpoints" else source.parent


def kept_checkpoint_path(run_dir: Path, frames: int) -> Path:
    """Where ``checkpoint.keep=true`` keeps the checkpoint written at T = ``frames``; the
    padding makes the names sort by T."""
    return Path(run_dir) / "checkpoints" / f"frames_{frames:011d}.pt"


def keep_copy(path: Path, kept: Path) -> None:
    """Keep the checkpoint just written at ``path`` as ``kept`` as well: a hard link, since
    the next save replaces ``path`` with a new file and leaves this one's contents to
    ``kept`` (each kept file then holds a whole checkpoint on disk). Where links are refused
    (some network and FUSE filesystems), a copy, synced as ``save_checkpoint`` syncs."""
    import shutil

    if kept.exists() and os.path.samefile(path, kept):
        return  # already kept: renaming a link over itself would leave the temporary behind
    tmp = kept.with_name(f".{kept.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        try:
            os.link(path, tmp)
        except OSError:
            with path.open("rb") as source, tmp.open("wb") as copy:
                shutil.copyfileobj(source, copy)
                copy.flush()
                os.fsync(copy.fileno())
        os.replace(tmp, kept)  # a resumed run that writes the same T again replaces it whole
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_checkpoint(path: Path, checkpoint: Checkpoint) -> None:
    """Write ``checkpoint`` so that ``path`` holds either the old file or the whole new one."""
    import torch  # here, not at the top: the CLI checks a command line without torch

    path.parent.mkdir(parents=True, exist_ok=True)
    # getattr, not dataclasses.asdict: that would deep-copy every tensor
    values = {f.name: getattr(checkpoint, f.name) for f in fields(Checkpoint)}
    body = {"format": FORMAT_VERSION, **{k: v for k, v in values.items() if v is not None}}
    body[DIGEST_KEY] = content_digest(body)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(body, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def describe_load_error(path: Path, message: str) -> str:
    """torch's refusal in one line, without its advice to retry with weights_only=False:
    that would run whatever code the file carries, and an asyncrl checkpoint never needs it."""
    if "Unsupported global" in message:
        return (f"{path} is not an asyncrl checkpoint: it holds Python objects that a "
                "checkpoint never contains, and is not loaded")
    unpickler = re.search(r"WeightsUnpickler error:\s*(.+)", message)
    if unpickler:
        return f"corrupt checkpoint {path}: {unpickler.group(1).strip().rstrip('.')}"
    return f"corrupt checkpoint {path}: {message.splitlines()[0]}"


def load_checkpoint(path: Path) -> Checkpoint:
    """Read a checkpoint; a missing, truncated or foreign file raises UserError."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise UserError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise UserError(describe_load_error(path, str(exc) or type(exc).__name__)) from None
    if not isinstance(payload, dict) or any(k not in payload for k in REQUIRED_KEYS):
        raise UserError(f"corrupt checkpoint {path}: not an asyncrl checkpoint")
    if not isinstance(payload["format"], int) or not 1 <= payload["format"] <= FORMAT_VERSION:
        raise UserError(f"checkpoint {path} has format {payload['format']}, "
                        f"this asyncrl reads 1 to {FORMAT_VERSION}")
    written = payload.pop(DIGEST_KEY, None)
    if written is not None and written != content_digest(payload):
        raise UserError(f"corrupt checkpoint {path}: its contents do not match the SHA-256 "
                        "written with them")
    return Checkpoint(**_migrated(payload))


def load_model_weights(model: Any, state: dict[str, Any], path: Path) -> None:
    """``model.load_state_dict(state)``; weights of another shape or name -> UserError."""
    try:
        model.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError) as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        detail = lines[1] if len(lines) > 1 else (lines[0] if lines else type(exc).__name__)
        raise UserError(f"checkpoint {path} does not fit the network its config builds "
                        f"({detail.rstrip('.')})") from None
