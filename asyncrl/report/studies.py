"""What a tuning sweeper concluded: Hydra's Optuna sweeper leaves ``optimization_results.yaml``
at the top of its sweep directory (the best parameters and the best value it was told)."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

RESULTS_FILE = "optimization_results.yaml"


def study_lines(roots: list[Path]) -> list[str]:
    """One line per sweep directory under ``roots`` that holds a study's result."""
    lines = []
    for root in roots:
        for path in sorted(Path(root).rglob(RESULTS_FILE)):
            try:
                result = OmegaConf.to_container(OmegaConf.load(path))
            except Exception as exc:  # a study stopped while writing, a foreign file
                lines.append(f"- `{path.parent}`: unreadable {RESULTS_FILE} "
                             f"({type(exc).__name__})")
                continue
            assert isinstance(result, dict)
            lines.append(f"- `{path.parent}` ({result.get('name', 'study')}): "
                         + _best(result))
    return lines


def _best(result: dict) -> str:
    if "best_params" in result:
        params = ", ".join(f"{k}={_g(v)}" for k, v in (result["best_params"] or {}).items())
        return f"best objective {_g(result.get('best_value'))} with {params or 'no parameters'}"
    solutions = result.get("solutions") or []
    return f"{len(solutions)} Pareto-optimal trials"


def _g(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
