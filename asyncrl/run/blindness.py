"""A warning, once per run, when a feed-forward image network has stopped reading the screen.

Too large a step can silence every unit of a ReLU layer at once. From then on the policy and
the value are the same on every screen, no gradient reaches the silent layer, and the score
stays at random play's: on Breakout, the preset's lr with 16 workers did so from the first
million frames to 20M (docs/notes/). The probe finds it after the run; this watch finds
it while the run goes, from the spreads the workers log: A3C's ``value_spread`` and
``policy_spread``, how much V(s) and the policy's logits differ across each update's states,
and the Q-methods' ``q_spread`` (below). Each algorithm names its own
(``blindness_spreads``). A network can also go blind slowly, its last conv's units falling
silent one by one while its outputs still differ a little: for A3C on an image network the
watch also reads ``live_units`` beside the policy's entropy (BLIND_LIVE below).

Read on 192 segments of random play through the Atari network (5 states and their bootstrap
state each, or 16 such segments together, as at 16 environments per worker; the probe's
``collect_screens`` and ``output_spreads`` on each run's checkpoint, on the 2-core AMD EPYC
on 2026-11-30), the means were:

| network | V(s) | logits |
| --- | ---: | ---: |
| at T = 0 (Pong, Breakout) | 3.4e-3 to 6.0e-3 | 3.5e-3 to 6.2e-3 |
| learning (Pong lr 1e-3 at 1M frames, Breakout lr 3e-4 at 6.8M) | 5.0e-2 or more | 7.3e-3 or more |
| blind (Pong lr 2e-3 at 1M, Breakout with 16 workers at 20M) | 2e-9 to 8.8e-5 | 8e-10 to 2.2e-5 |

So the threshold sits between the blind and the untrained, for both. Logged by the workers
of real runs (2 workers on the 2-core machine, 1M frames, means per 100k frames): Pong with
the preset never went below 1.7e-2 (V) and 5.2e-3 (policy); Breakout at the defaults (lr
7e-3, which sat at random play's score for 5.8M frames in docs/notes/) fell to
8.9e-5-2.7e-4 and 2.0e-4-4.3e-4 from 0.3M frames on, and this watch, given that run's
readings in the order they came, speaks at 0.56M. Pong
with the preset and 16 workers on the 2 cores came closest without it: means of 6.2e-4 and
1.8e-4 at their lowest (0.1-0.4M frames), 58 of its 1,556 readings below both but at most 25
in a row, and it went on to learn.

Both must be below it: V alone can be the same on every state of a healthy network, where
the reward follows the action and not the state.

The Q-methods log one spread, ``q_spread``: each action's Q(s, a) spread over the update's
states, averaged over the actions. Read the same way on n-step Q's network (Pong; 192
segments of random play, a segment's 5 states as an update at one environment per worker
reads them, or 16 segments together; 2026-12-06, the 2-core AMD EPYC; docs/notes/,
"n-step Q with 16 environments per worker and RMSProp's square average started at 0.1"):

| network | one segment | 16 segments |
| --- | ---: | ---: |
| at T = 0 | 4.4e-3 (lowest 1.0e-3) | 6.2e-3 |
| blind (16 environments per worker, lr 1e-3; 1M to 6.55M frames) | 0 to 1.2e-6 | 0 to 5.3e-6 |
| learning (0.5M to 1.5M frames; two runs) | 0.079 or more | 0.25 or more |

The learning runs: the blind run's command with the square average started at 0.1, and the
paper's loop at one environment per worker. As their workers logged it: never below 3.8e-3
and 1.4e-3, and 0.199 and 0.031 or more after their first 0.5M and 0.1M frames. So the same
threshold serves. An update that reads one state (t_max 1 at one environment, no double Q or
replay) has a spread of 0 on any network: such runs are not watched.

A recurrent network's state moves its outputs when the torso is blind, and a small state
vector's outputs were not read, so the watch reads feed-forward convolutional networks only.
"""

from __future__ import annotations

import math
from typing import Any

from torch import nn

from asyncrl.nets.torsos import ConvTorso

BLIND_SPREAD = 3e-4
# how long the spreads must stay below BLIND_SPREAD before the warning: this many readings in
# a row (each a worker's mean over log.interval_seconds) spanning this many frames of T, or a
# tenth of a shorter run. Pong's 16 workers above stayed below for 25 readings over 18.6k
# frames at most; Breakout at the defaults for 32 over 69k, then 50 over 106k.
BLIND_READINGS = 30
BLIND_FRAMES = 100_000


PROBE_HINT = "; asyncrl-probe --analyse RUN_DIR says which layers fell silent"
# what each spread measures, as the warning names it
SPREAD_WORDS = {"value_spread": "V(s)", "policy_spread": "policy",
                "q_spread": "action values Q(s, a)"}


# The second way a network goes blind, slowly: the units of its last conv stop firing one by
# one while the policy stays near uniform, and the spreads stay near an untrained network's,
# above BLIND_SPREAD. On 2026-12-07 the probe read 0.10-0.11 of the last conv's outputs live
# at 5M frames in Boxing, Bank Heist and Battle Zone (their training entropy at 0.98-1.00 of
# uniform), and 0.42-0.79 in Alien, Amidar and Breakout, which learned. Over update-sized
# batches of a checkpoint's own play (16 environments, t_max 20) A3C's ``live_units`` read
# 0.15 on Boxing at 1.5M frames on its way there (entropy 0.91-0.99 of uniform), 0.25-0.69 in
# runs leaving uniform at 5M (Bank Heist, Beam Rider), 0.92 on Pong at 14.6
# (docs/notes/2026-12-07-blindness.md). ``live_units`` below BLIND_LIVE with the training
# entropy at NEAR_UNIFORM of uniform or more, in every reading over BLIND_LIVE_FRAMES, is
# that state.
BLIND_LIVE = 0.15
NEAR_UNIFORM = 0.9
BLIND_LIVE_FRAMES = 1_000_000


class BlindnessWatch:
    """Reads the workers' ``spreads`` (A3C's ``value_spread`` and ``policy_spread``, the
    Q-methods' ``q_spread``); ``reading`` returns the warning the first time all of them have
    stayed below BLIND_SPREAD for ``readings`` readings in a row over ``frames`` frames, and
    None otherwise. Given ``uniform_entropy`` (a discrete policy's log of its action count),
    it also warns the first time ``live_units`` has stayed below BLIND_LIVE with the policy's
    ``entropy`` near uniform over ``live_frames`` frames."""

    def __init__(self, spreads: tuple[str, ...], readings: int = BLIND_READINGS,
                 frames: int = BLIND_FRAMES, probe_hint: bool = False,
                 uniform_entropy: float | None = None,
                 live_frames: int = BLIND_LIVE_FRAMES) -> None:
        if not spreads:
            raise ValueError("a blindness watch needs a spread to read")
        self.spreads = spreads
        self.needed_readings = readings
        self.needed_frames = frames
        self.probe_hint = probe_hint
        self.uniform_entropy = uniform_entropy
        self.live_frames = live_frames
        self.live_since: int | None = None
        self.streak = 0
        self.since = 0
        self.warned = False

    def reading(self, frames: int, stats: dict[str, float]) -> str | None:
        if self.warned:
            return None
        said = self._silent_units(frames, stats) or self._flat_outputs(frames, stats)
        self.warned = said is not None
        return said

    def _silent_units(self, frames: int, stats: dict[str, float]) -> str | None:
        if self.uniform_entropy is None or "live_units" not in stats or "entropy" not in stats:
            return None
        if not (stats["live_units"] < BLIND_LIVE
                and stats["entropy"] >= NEAR_UNIFORM * self.uniform_entropy):
            self.live_since = None
            return None
        if self.live_since is None:
            self.live_since = frames
        if frames - self.live_since < self.live_frames:
            return None
        hint = PROBE_HINT if self.probe_hint else ""
        return (f"most units of the network's last conv layer no longer respond to the "
                f"screen: live_units below {BLIND_LIVE:g} with the policy within "
                f"{1 - NEAR_UNIFORM:.0%} of uniform in every reading from T={self.live_since:,} "
                f"to T={frames:,}, so it has most likely stopped reading the screen (its "
                f"outputs still differ a little); runs in this state stayed at random play's "
                f"score, and a lower lr or RMSProp eps 0.1 kept more units alive at a cost on "
                f"the games that learn (docs/notes/2026-12-07-blindness.md{hint})")

    def _flat_outputs(self, frames: int, stats: dict[str, float]) -> str | None:
        if any(name not in stats for name in self.spreads):
            return None
        if not all(stats[name] < BLIND_SPREAD for name in self.spreads):  # nan: not below
            self.streak = 0
            return None
        if self.streak == 0:
            self.since = frames
        self.streak += 1
        if self.streak < self.needed_readings or frames - self.since < self.needed_frames:
            return None
        outputs = " and ".join(SPREAD_WORDS[name] for name in self.spreads)
        below = "both spreads" if len(self.spreads) == 2 else "their spread"
        return (f"the network's {outputs} barely differ between states: {below} "
                f"below {BLIND_SPREAD:g} (under a tenth of an untrained network's) in "
                f"{self.streak} readings in a row from T={self.since:,} to T={frames:,}, so "
                f"it has most likely stopped reading the screen; runs in this state stayed at "
                f"random play's score for millions of frames; a lower lr kept A3C's network "
                f"reading it, and on Pong RMSProp's square average started at 0.1 "
                f"(optimizer.initial_square_avg=0.1) kept A3C's and n-step Q's "
                f"(docs/notes/{PROBE_HINT if self.probe_hint else ''})")


def blindness_watch(model: Any, total_frames: int, spreads: tuple[str, ...],
                    probe_hint: bool = False) -> BlindnessWatch | None:
    """A watch over ``spreads`` (what the run's algorithm logs: its ``blindness_spreads``)
    for ``model`` in a run of ``total_frames``, or None where there is no spread to read or
    the watch's threshold was not measured. ``probe_hint``: the warning points to
    ``asyncrl-probe --analyse``, which reads this run."""
    if not spreads or getattr(model, "recurrent", False) or not isinstance(
            getattr(model, "torso", None), ConvTorso):
        return None
    policy = getattr(model, "policy", None)  # an actor-critic's discrete policy head
    uniform = math.log(policy.out_features) if isinstance(policy, nn.Linear) else None
    return BlindnessWatch(spreads, frames=min(BLIND_FRAMES, total_frames // 10),
                          probe_hint=probe_hint, uniform_entropy=uniform,
                          live_frames=min(BLIND_LIVE_FRAMES, total_frames // 10))
