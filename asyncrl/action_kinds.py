"""Which network acts in which kind of action space: one answer for the config's check
and for the model builder (no torch here: the command line checks configs without it)."""

from __future__ import annotations


def action_kind_problem(network: str, continuous: bool, where: str) -> str | None:
    """Why ``network=network`` cannot act where actions are (or are not) ``continuous``;
    None where it can. ``where`` names the environment or the action space in the message."""
    if continuous and network != "gaussian":
        return (f"{where} has continuous actions, but network={network} has a softmax "
                "policy; use network=gaussian")
    if network == "gaussian" and not continuous:
        return (f"network=gaussian draws continuous actions, but {where} has discrete ones; "
                "use network=ff or network=lstm")
    return None
