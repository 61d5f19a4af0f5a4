"""A config from overrides, as the CLI, the API, the bench and the tools compose it, and
the checks that refuse a bad one in one line before anything runs.

Below the faces: ``commands/`` and ``api.py`` import it; it imports neither.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import MissingMandatoryValue

from asyncrl.config.checks import validate
from asyncrl.config.paths import config_dir
from asyncrl.config.schemas import refusal
from asyncrl.errors import UserError
from asyncrl.sweep_range import check_range

# groups the config chooses itself: the family an env's YAML marks, the layers that follow
INTERNAL_GROUPS = ("family", "domain", "domain/all")


# presets given a name that says what they change (2026-12-07): old -> new. Each old name
# keeps working through its own file in conf/experiment/ (``defaults: [NEW]``), which
# --help and the README leave out; the CLI says the new name once (renamed_preset_notes)
RENAMED_PRESETS = {
    "a3c_batched": "a3c_k16",
    "a3c_batched_background": "a3c_k16_orthogonal_bg",
    "a3c_batched_t20": "a3c_k16_t20",
    "a3c_batched_t20_background": "a3c_tuned_keys",
    "nstep_q_batched": "nstep_q_k16",
}


def renamed_preset_notes(overrides: Sequence[str]) -> list[str]:
    """A line for each ``+experiment=`` of ``overrides`` that names a preset by its old name
    (a sweep's values too: ``+experiment=a3c_batched,paper``)."""
    notes = []
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+") != "experiment":
            continue
        for old in re.split(r"[\s,()\[\]]+", value):
            if old in RENAMED_PRESETS:
                notes.append(f"{key}={old} is now {key}={RENAMED_PRESETS[old]} "
                             "(the old name keeps working)")
    return notes


def compose_config(overrides: Sequence[str], as_object: bool = False,
                   with_hydra: bool = False) -> Any:
    """Compose ``conf/config.yaml`` with overrides; every Hydra/OmegaConf error -> UserError.
    ``with_hydra``: keep the ``hydra`` node (run directory, logging), as a run needs it."""
    from hydra import compose, initialize_config_dir

    for override in overrides:
        group = override.split("=", 1)[0].lstrip("+~").split("@", 1)[0]
        if group in INTERNAL_GROUPS:
            raise UserError(f"{override}: {group} follows from env= and setting=; choose "
                            "those instead (setting=tuned, paper or base)")
    try:
        with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=list(overrides),
                          return_hydra_config=with_hydra)
            check_switches(cfg, overrides)
            return to_typed(cfg) if as_object else cfg
    except UserError:
        raise
    except Exception as exc:
        if _from_a_layer(exc) and "setting=base" not in overrides:
            _refuse_as_the_base_groups_would(overrides)
        raise UserError(describe_config_error(exc)) from None


def to_typed(cfg: Any) -> Any:
    """The typed dataclasses of a composed config; an OmegaConf error -> UserError."""
    try:
        typed = OmegaConf.to_object(cfg)
        # to_object leaves a list inside a list unchecked ([[1]] for a list of ints); the
        # launcher's copy of the config would refuse it with a traceback
        OmegaConf.structured(typed)
    except Exception as exc:
        raise UserError(describe_config_error(exc)) from None
    return typed


def _from_a_layer(exc: BaseException) -> bool:
    """Whether composing failed on a key a setting's layer (conf/domain) sets."""
    return re.search(r"In 'domain/", _causes(exc)) is not None


def _refuse_as_the_base_groups_would(overrides: Sequence[str]) -> None:
    """A layer's key that the chosen option lacks (network=gaussian on Atari) may hide the
    real mistake: refuse as the same command over the base groups is refused, if it is."""
    try:
        validate(compose_config([*overrides, "setting=base"], as_object=True))
    except UserError:
        raise
    except Exception:  # noqa: BLE001 - anything else: the layer's own message says more
        return


def check_switches(cfg: Any, overrides: Sequence[str]) -> None:
    """Refuse a true/false key of ``cfg`` that ``overrides`` give anything else: OmegaConf
    would read ``3`` or ``yes`` as true, so a mistyped switch would run as if it were on.
    Every way in asks it: a single run, each run of a multirun, a resume's changes."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import BooleanNode, DictConfig

    mine = [o for o in overrides if not o.startswith(("hydra.", "hydra/"))]
    for override in OverridesParser.create().parse_overrides(mine):
        if override.is_delete() or override.is_sweep_override():
            continue
        value = override.value()
        if isinstance(value, bool) or (isinstance(value, str) and (
                value.lower() in ("true", "false") or value.startswith("${"))):
            continue  # an interpolation is checked as the value it resolves to
        parent_key, _, name = override.key_or_group.rpartition(".")
        parent = OmegaConf.select(cfg, parent_key) if parent_key else cfg
        node = (parent._get_node(name, validate_access=False)
                if isinstance(parent, DictConfig) else None)
        if isinstance(node, BooleanNode):
            raise UserError(f"{override.key_or_group}={override.get_value_element_as_str()}: "
                            "must be true or false")


MULTIRUN_CHECK_LIMIT = 200  # configs composed to check a multirun's values (~20 ms each)


def check_multirun(overrides: Sequence[str], every_value: bool = True,
                   also: Callable[[Any], object] | None = None) -> None:
    """Check the values a multirun will use, as a single run's values are checked
    (``also``: a further check of each composed config, such as init_from's file).

    The first value of every swept key gives one config; with ``every_value`` each other
    value of each swept key is then checked with the rest at their first. A range the
    sweeper draws from (``interval(...)``) is the sweeper's to check.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    mine = [o for o in overrides if not o.startswith(("hydra.", "hydra/"))]
    try:
        parsed = OverridesParser.create().parse_overrides(mine)
    except Exception as exc:
        raise UserError(describe_config_error(exc)) from None
    fixed: list[str] = []
    swept: list[tuple[str, list[str]]] = []
    for override in parsed:
        key = override.get_key_element()
        if not override.is_sweep_override():
            fixed.append(str(override.input_line))
            continue
        try:
            values = list(override.sweep_string_iterator())
        except Exception:  # interval(...) and other draws: no values to list
            continue
        swept.append((key, values))
    first = [f"{key}={values[0]}" for key, values in swept if values]
    configs = [first]
    if every_value:
        configs += [[f"{k}={v}" if k == key else f"{k}={vs[0]}" for k, vs in swept]
                    for key, values in swept for v in values[1:]]
    for choice in configs[:MULTIRUN_CHECK_LIMIT]:
        cfg = compose_config([*fixed, *choice], as_object=True)
        validate(cfg)
        if also is not None:
            also(cfg)


def check_sweep(overrides: Sequence[str]) -> None:
    """Refuse an impossible sweep range before Hydra starts any run."""
    from hydra import compose, initialize_config_dir

    single = [o for o in overrides if "," not in o.split("=", 1)[-1] or o.startswith("hydra.")]
    try:
        with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=single, return_hydra_config=True)
            sweeper = cfg.hydra.sweeper
            if "trials" not in sweeper:  # Hydra's basic sweeper: no range to check
                return
            low, high, trials = sweeper.low, sweeper.high, int(sweeper.trials)
    except Exception as exc:
        raise UserError(describe_config_error(exc)) from None
    # a bound left out is each run's env's, which only the sweeper's plan knows (a preset
    # may choose the envs); it checks each run's range before any run starts
    check_range(1.0 if low is None else float(low), 2.0 if high is None else float(high), trials)


def describe_config_error(exc: BaseException) -> str:
    """One line from Hydra's or OmegaConf's multi-line messages: what, then why."""
    missing = re.search(r"Could not find '([^']+)'", str(exc))
    if missing:
        return describe_missing_option(missing.group(1))
    if isinstance(exc, MissingMandatoryValue) and exc.full_key:
        return f"{exc.full_key} has no default: give it, e.g. {exc.full_key}=..."
    foreign = re.search(r"Key '(\w+)' not in '(\w+)'", _causes(exc))
    reason = foreign and refusal(foreign.group(2), foreign.group(1))
    if reason:
        layer = re.search(r"In '(domain/(?!all/)(\w+)/[\w/]+)'", _causes(exc))
        if layer:  # the setting's layer set the key, not the command line
            instead = "setting=base" + (" (or setting=paper)" if layer.group(2) != "paper" else "")
            return (f"{reason}; conf/{layer.group(1)}.yaml sets it for setting="
                    f"{layer.group(2)}: add {instead} to leave it out")
        return reason
    choice = re.search(r"Invalid value '([^']*)', expected one of \[([^\]]*)\][\s\S]*?"
                       r"full_key: (\S+)", _causes(exc))
    if choice:  # a key whose type is a choice of names (asyncrl.choices)
        value, names, key = choice.groups()
        return f"{key}={value}: choose {' or '.join(names.split(', '))}"
    if "'env.kwargs'" in str(exc):  # a whole dict cannot replace a node of the schema
        return ("env.kwargs takes gymnasium.make's keywords one at a time: "
                "+env.kwargs.NAME=VALUE")
    parts: list[str] = []
    key = getattr(exc, "full_key", None)
    if key and f"'{key}'" not in str(exc):  # say which key, as every other refusal does
        parts.append(str(key))
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 3:
        first = next((ln.strip() for ln in str(seen).splitlines() if ln.strip()), "")
        if first and first not in parts and "$VALUE" not in first:
            parts.append(first.rstrip("."))
        seen = seen.__cause__ or seen.__context__
    return ": ".join(parts) or type(exc).__name__


def _causes(exc: BaseException) -> str:
    """The messages of ``exc`` and of what caused it, joined."""
    texts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(texts) < 5:
        texts.append(str(seen))
        seen = seen.__cause__ or seen.__context__
    return "\n".join(texts)


def describe_missing_option(path: str) -> str:
    """``env/atari/foo`` -> which group, which option, and what the group does offer."""
    group, _, option = path.partition("/")
    folder, _, _ = path.rpartition("/")
    options = available_options(folder)
    if not options:
        options = available_options(group)
        folder = group
    listed = ", ".join(options[:10]) + (f", ... ({len(options)} in all)" if len(options) > 10
                                         else "")
    return f"unknown {group} option '{option}' (conf/{folder} has: {listed or 'nothing'})"


def available_options(folder: str) -> list[str]:
    """Config files (without .yaml) and subfolders under ``conf/<folder>``."""
    root = config_dir().joinpath(*folder.split("/"))
    if not root.is_dir():
        return []
    names = []
    for entry in root.iterdir():
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_dir():
            names.append(entry.name + "/")
        elif entry.name.endswith(".yaml"):
            names.append(entry.name[: -len(".yaml")])
    return sorted(names)
