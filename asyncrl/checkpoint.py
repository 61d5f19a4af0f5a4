"""Checkpoints: written atomically, read back with a clear error when missing or corrupt.

torch's zip container does not check its records' CRCs when it reads: a flipped byte in a
tensor loads as a silently different weight. So every checkpoint carries a SHA-256 of its
contents, and one whose contents do not match is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from asyncrl.errors import UserError

FORMAT_VERSION = 1
REQUIRED_KEYS = ("format", "model", "optimizer", "frames", "wall_time", "generation", "config")
DIGEST_KEY = "sha256"  # absent from checkpoints written before it existed: those load unchecked


def content_digest(payload: Any) -> str:
    """SHA-256 over every tensor's bytes, dtype and shape and every other value's repr,
    walking dicts in key order: equal for equal contents, whatever the container."""
    import torch

    digest = hashlib.sha256()

    def feed(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            flat = value.detach().cpu().contiguous().reshape(-1)
            digest.update(f"T{flat.dtype}{tuple(value.shape)}:".encode())
            digest.update(flat.view(torch.uint8).numpy().data)  # the buffer, not a copy
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


def save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` so that ``path`` holds either the old file or the whole new one."""
    import torch  # here, not at the top: the CLI checks a command line without torch

    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"format": FORMAT_VERSION, **payload}
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


def load_checkpoint(path: Path) -> dict[str, Any]:
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
    if payload["format"] != FORMAT_VERSION:
        raise UserError(f"checkpoint {path} has format {payload['format']}, "
                        f"this asyncrl reads {FORMAT_VERSION}")
    written = payload.pop(DIGEST_KEY, None)
    if written is not None and written != content_digest(payload):
        raise UserError(f"corrupt checkpoint {path}: its contents do not match the SHA-256 "
                        "written with them")
    return payload


def load_model_weights(model: Any, state: dict[str, Any], path: Path) -> None:
    """``model.load_state_dict(state)``; weights of another shape or name -> UserError."""
    try:
        model.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError) as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        detail = lines[1] if len(lines) > 1 else (lines[0] if lines else type(exc).__name__)
        raise UserError(f"checkpoint {path} does not fit the network its config builds "
                        f"({detail.rstrip('.')})") from None
