"""The GIL is released while the C library computes: another Python thread
makes progress during one long resample call. With the switch interval raised
to 100 s, a thread waiting for the GIL could only run inside the call if the
call released it; no timing threshold is involved."""

import sys
import threading
import time

import numpy as np

import robocache


def test_gil_released_during_resample():
    S, T, D = 200_000, 2_000_000, 4
    t = np.arange(S, dtype=np.int64) * 1000
    v = np.random.default_rng(0).standard_normal((S, D)).astype(np.float32)
    x = np.random.default_rng(1).integers(0, S * 1000, size=T)
    out = np.empty((T, D), dtype=np.float32)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)  # hand the GIL back at once when it is ours

    old = sys.getswitchinterval()
    worker = threading.Thread(target=count)
    worker.start()
    try:
        while counter[0] == 0:
            time.sleep(0.001)
        sys.setswitchinterval(100.0)
        progressed = []
        for _ in range(3):
            before = counter[0]
            robocache.resample(v, t, x, out=out)
            progressed.append(counter[0] - before)
    finally:
        sys.setswitchinterval(old)
        stop.set()
        worker.join()
    assert max(progressed) > 0, progressed
    np.testing.assert_allclose(out[:, 0], np.interp(x, t, v[:, 0]), rtol=1e-5, atol=1e-5)


def test_two_threads_resample_concurrently_with_correct_results():
    rng = np.random.default_rng(2)
    t = np.cumsum(rng.integers(1, 100, size=5000))
    v = rng.standard_normal((5000, 3))
    xs = [rng.integers(0, int(t[-1]), size=200_000) for _ in range(2)]
    results = [None, None]

    def run(i):
        for _ in range(3):
            results[i] = robocache.resample(v, t, xs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i in range(2):
        np.testing.assert_allclose(results[i][:, 1], np.interp(xs[i], t, v[:, 1]), rtol=1e-12,
                                   atol=1e-12)
