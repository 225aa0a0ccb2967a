"""Rates, jitter, spans and gaps of the streams of a recording (for `info`)."""

import numpy as np

GAP_FACTOR = 1.5  # a step longer than this many median periods is a gap


def summarize(series):
    """dict of one Series: samples, columns, kind, clock, start_ns, end_ns,
    span_s, median_period_s, rate_hz (1 / median period), jitter_s (population
    std of the steps), min_step_s, max_step_s, gaps (steps > 1.5 x median)."""
    t = series.times
    out = {"samples": int(t.shape[0]), "columns": int(series.values.shape[1]),
           "kind": series.kind, "clock": series.clock}
    if t.shape[0]:
        out.update(start_ns=int(t[0]), end_ns=int(t[-1]), span_s=(int(t[-1]) - int(t[0])) * 1e-9)
    if t.shape[0] >= 2:
        dt = np.diff(t).astype(np.float64) * 1e-9
        med = float(np.median(dt))
        out.update(median_period_s=med, rate_hz=1.0 / med if med > 0 else float("inf"),
                   jitter_s=float(dt.std()), min_step_s=float(dt.min()),
                   max_step_s=float(dt.max()), gaps=int(np.count_nonzero(dt > GAP_FACTOR * med)))
    return out


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def describe(recording, episodes=None):
    """A human-readable table of a Recording: per episode, each stream's kind,
    clock, samples, columns, rate, jitter, span and gaps."""
    lines = [f"{recording.path}: {recording.format}, {len(recording.episodes)} episode(s)"]
    chosen = recording.episodes if episodes is None else [recording.episodes[i] for i in episodes]
    for ep in chosen:
        meta = ", ".join(f"{k}={v}" for k, v in ep.meta.items() if k in ("task", "fps", "robot_type"))
        lines.append(f"episode {ep.index}" + (f" ({meta})" if meta else ""))
        w = max([40] + [len(n) for n in ep.streams])
        lines.append(f"  {'stream':{w}s} {'kind':10s} {'clock':9s} {'samples':>8s} {'D':>4s} "
                     f"{'rate Hz':>9s} {'jitter ms':>9s} {'span s':>9s} {'gaps':>5s}")
        for name, s in ep.streams.items():
            d = summarize(s)
            jitter = None if "jitter_s" not in d else d["jitter_s"] * 1e3
            lines.append(f"  {name:{w}s} {d['kind']:10s} {d['clock']:9s} {d['samples']:8d} "
                         f"{d['columns']:4d} {_fmt(d.get('rate_hz'), '9.3f')} "
                         f"{_fmt(jitter, '9.3f')} {_fmt(d.get('span_s'), '9.3f')} "
                         f"{_fmt(d.get('gaps'), '5d')}")
            s.release()
    return "\n".join(lines)
