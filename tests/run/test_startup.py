"""The clock behind the launcher's 'first frame N s after the command' line."""

from __future__ import annotations

import subprocess
import sys

from asyncrl.run_files import startup
from asyncrl.run_files.startup import StartupClock, first_frame_phases


def test_process_age_counts_from_the_exec_not_from_our_first_line():
    # the child sleeps before it imports anything of ours: the age must include that sleep
    code = ("import time; time.sleep(0.6)\n"
            "from asyncrl.run_files.startup import process_age; print(process_age())")
    age = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               check=True).stdout)
    assert 0.6 <= age < 30


def test_the_report_splits_the_wait_into_phases_that_add_up(monkeypatch):
    now = iter([101.25, 101.5, 104.0])
    monkeypatch.setattr(startup, "_clocks_started", 0)
    monkeypatch.setattr(startup, "process_age", lambda: 3.0)  # at monotonic 100: exec at 97
    monkeypatch.setattr(startup.time, "monotonic", lambda: 100.0)
    clock = StartupClock()
    monkeypatch.setattr(startup.time, "monotonic", lambda: next(now))
    clock.mark("imports and config")
    clock.mark("model")
    said = clock.finish()
    assert clock.done
    assert said == ("first frame 7.0 s after the command (imports and config 4.2 s, "
                    "model 0.2 s, workers' start 2.5 s)")
    assert first_frame_phases(f"[x][asyncrl.run.launcher][INFO] - {said}\n") == {
        "total": 7.0, "imports and config": 4.2, "model": 0.2, "workers' start": 2.5}


def test_a_later_run_in_the_same_process_counts_from_its_own_launcher(monkeypatch):
    # a multirun's second job: its exec was an hour ago, its own wait began just now
    monkeypatch.setattr(startup, "_clocks_started", 0)
    monkeypatch.setattr(startup, "process_age", lambda: 3600.0)
    first, second = StartupClock(), StartupClock()
    first.mark("imports and config")
    second.mark("imports and config")
    assert first.marks[0][1] >= 3600
    assert second.marks[0][1] < 60


def test_no_age_no_report_and_a_resume_reads_the_last_line(monkeypatch):
    monkeypatch.setattr(startup, "_clocks_started", 0)
    monkeypatch.setattr(startup, "process_age", lambda: None)
    clock = StartupClock()
    clock.mark("model")
    assert clock.report() is None
    log = ("first frame 9.0 s after the command (model 9.0 s)\nT=100\n"
           "first frame 3.5 s after the command (model 3.5 s)\n")
    assert first_frame_phases(log) == {"total": 3.5, "model": 3.5}
    assert first_frame_phases("T=100 frames\n") is None
