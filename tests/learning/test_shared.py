"""Hogwild: the model, optimizer statistics and counters really live in shared memory."""

import torch
import torch.multiprocessing as mp

from asyncrl.run.launcher import Launcher
from tests.conftest import compose


def _bump(shared):
    with torch.no_grad():
        next(shared.model.parameters()).add_(1.0)
    shared.optimizer.square_avg[0].add_(2.0)
    shared.frames[1] += 40


def test_every_shared_tensor_is_in_shared_memory(tmp_path):
    launcher = Launcher(compose("env=classic/cartpole", "workers=3"), tmp_path)
    tensors = launcher.shared.tensors()
    assert len(tensors) > 4
    assert all(t.is_shared() for t in tensors)


def test_a_spawned_process_writes_where_the_launcher_reads(tmp_path):
    launcher = Launcher(compose("env=classic/cartpole", "workers=2"), tmp_path)
    shared = launcher.shared
    first = next(shared.model.parameters()).detach().clone()
    process = mp.get_context("spawn").Process(target=_bump, args=(shared,))
    process.start()
    process.join(60)
    assert process.exitcode == 0
    assert torch.allclose(next(shared.model.parameters()), first + 1.0)
    assert float(shared.optimizer.square_avg[0].flatten()[0]) == 2.0
    assert shared.total_frames() == 40


def test_stop_flag_and_frame_counter(tmp_path):
    launcher = Launcher(compose("env=classic/cartpole", "workers=2"), tmp_path)
    shared = launcher.shared
    shared.base_frames = 100
    shared.frames[0] += 8
    assert shared.total_frames() == 108
    assert not shared.stopping()
    shared.request_stop()
    assert shared.stopping()


def _arrive_late(shared, delay):
    import time

    time.sleep(delay)
    shared.ready[1] = 1


def test_workers_start_together(tmp_path):
    import time

    shared = Launcher(compose("env=classic/cartpole", "workers=2"), tmp_path).shared
    process = mp.get_context("spawn").Process(target=_arrive_late, args=(shared, 1.0))
    process.start()
    begun = time.monotonic()
    assert shared.start_together(0, timeout=60.0)
    waited = time.monotonic() - begun
    process.join(60)
    assert waited >= 0.5  # held at the gate until slot 1 was ready
    assert shared.ready.tolist() == [1, 1]


def test_start_gate_gives_up_on_timeout_and_on_stop(tmp_path):
    import time

    shared = Launcher(compose("env=classic/cartpole", "workers=2"), tmp_path).shared
    assert not shared.start_together(0, timeout=0.05)
    shared.request_stop()
    begun = time.monotonic()
    assert not shared.start_together(0, timeout=60.0)
    assert time.monotonic() - begun < 10.0  # the stop, not the timeout, ended the wait
    single = Launcher(compose("env=classic/cartpole", "workers=1"), tmp_path / "one").shared
    assert single.start_together(0, timeout=0.0)
