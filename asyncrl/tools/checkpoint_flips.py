"""How single flipped bits in a CartPole checkpoint end, with and without its SHA-256.

``python -m asyncrl.tools.checkpoint_flips [--flips 200] [--seed 0]`` trains CartPole in-process for
a few hundred frames, then flips one random bit of ``checkpoints/last.pt`` at a time and
counts, for torch's own loader and for ``asyncrl.run_files.checkpoint.load_checkpoint``: refused,
loaded with the very same contents, loaded with different contents. docs/reliability.md
quotes its output.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import torch

from asyncrl.errors import UserError
from asyncrl.run_files.checkpoint import checkpoint_path, content_digest, load_checkpoint

OUTCOMES = ("refused", "same contents", "different contents")


def _checkpoint(run_dir: Path) -> Path:
    from asyncrl.run.launcher import Launcher
    from asyncrl.tools.timing import compose

    cfg = compose("env=classic/cartpole", "serial=true", "workers=1", "total_frames=600",
                  "log.progress=false", "log.tensorboard=false", "eval.episodes=0")
    assert Launcher(cfg, run_dir).run() == 0
    return checkpoint_path(run_dir)


def _torch_outcome(path: Path, original: str) -> str:
    try:
        payload = torch.load(path, weights_only=True)
    except Exception:
        return "refused"
    payload.pop("sha256", None)
    return "same contents" if content_digest(payload) == original else "different contents"


def _asyncrl_outcome(path: Path, original_model: str) -> str:
    try:
        loaded = load_checkpoint(path)
    except UserError:
        return "refused"
    return ("same contents" if content_digest(loaded.model) == original_model
            else "different contents")


def survey(flips: int, seed: int) -> dict[str, dict[str, int]]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = _checkpoint(Path(tmp))
        good = path.read_bytes()
        payload = torch.load(path, weights_only=True)
        payload.pop("sha256", None)
        whole, model = content_digest(payload), content_digest(payload["model"])
        counts = {who: dict.fromkeys(OUTCOMES, 0) for who in ("torch.load", "asyncrl")}
        for _ in range(flips):
            data = bytearray(good)
            bit = rng.randrange(len(data) * 8)
            data[bit // 8] ^= 1 << (bit % 8)
            path.write_bytes(bytes(data))
            counts["torch.load"][_torch_outcome(path, whole)] += 1
            counts["asyncrl"][_asyncrl_outcome(path, model)] += 1
        return counts


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m asyncrl.tools.checkpoint_flips")
    parser.add_argument("--flips", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    counts = survey(args.flips, args.seed)
    from asyncrl.tools.bench import machine

    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {machine()}: {args.flips} single "
          f"flipped bits (seed {args.seed})")
    for who, outcome in counts.items():
        print(f"  {who}: " + ", ".join(f"{n} {what}" for what, n in outcome.items()))


if __name__ == "__main__":
    main()
