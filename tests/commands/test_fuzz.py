"""One seed of the fuzzer (tests/fuzz.py): every option and key with edge-case values, each
command line refused in one line or trained to its end. ``nox -s fuzz`` draws more."""

from __future__ import annotations

import io

from tests.fuzz import GROUPS, draw_cases, fuzz, keys_of, options


def test_the_draw_covers_every_option_and_every_key_of_each():
    cases = draw_cases(seed=0, count=0)
    lines = [" ".join(c.args) for c in cases]
    for group in GROUPS:
        for option in options(group):
            assert any(f"{group}={option} " in f"{line} " for line in lines), option
    mutated = {key for c in cases for key, _ in c.mutated}
    for group in GROUPS:
        for option in options(group):
            keys = {k for k, _ in keys_of(tuple(_alone(group, option)))
                    if k.startswith(f"{group}.")}
            assert keys <= mutated, (option, keys - mutated)
    assert any(c.multirun for c in cases) and any(not c.multirun for c in cases)


def _alone(group, option):
    from tests.fuzz import _choice_args

    return _choice_args({group: option})


def test_one_seed_of_command_lines_is_refused_in_one_line_or_trains():
    log = io.StringIO()
    # random cases only (the cover above is checked by nox -s fuzz): under two minutes
    summary = fuzz(seed=0, cases=80, trains=5, clis=2, log=log, cover_all=False)
    assert summary["drawn"] == 80
    assert summary["counts"].get("refused", 0) > 0 and summary["counts"].get("trained", 0) > 0
    assert not summary["findings"], log.getvalue()
