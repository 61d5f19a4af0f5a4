"""``init_from=``: the checkpoint a new run starts from, read and fitted to the run's
network before the run's directory is made, so that a missing, damaged or ill-fitting one
is refused in one line and leaves nothing on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asyncrl.errors import UserError
from asyncrl.run_files.checkpoint import Checkpoint, checkpoint_source

# the command line is checked, then trained in the same process: read the file once
_read: dict[Path, Checkpoint] = {}


def start_checkpoint(cfg: Any) -> Checkpoint:
    """The checkpoint ``cfg.init_from`` names (a file, or a run directory's last.pt), once
    its weights are known to fit the network ``cfg`` builds."""
    from asyncrl.algos import algorithm_class
    from asyncrl.envs import make_env
    from asyncrl.nets import build_model
    from asyncrl.run_files.checkpoint import load_checkpoint, load_model_weights

    try:
        path, _ = checkpoint_source(Path(cfg.init_from))
    except UserError as err:
        raise UserError(f"init_from={cfg.init_from}: {err}") from None
    key = path.resolve()
    if key not in _read:
        saved = load_checkpoint(path)
        env = make_env(cfg.env)
        try:
            model = build_model(cfg, env.observation_space, env.action_space,
                                algorithm_class(cfg.algo.name).head)
        finally:
            env.close()
        try:
            load_model_weights(model, saved.model, path)
        except UserError as err:
            raise UserError(f"init_from={cfg.init_from}: {err}") from None
        _read[key] = saved
    return _read[key]
