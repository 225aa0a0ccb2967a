"""Reading the CSV log of `ncu --csv --log-file LOG --print-units base`, for
the profiling scripts (profile_gpu_align.py, profile_gpu_voxel.py)."""

import csv


def kernel_name(raw, templates=True):
    """A kernel's name from ncu's "Kernel Name": no return type, namespaces or
    parameters; its template arguments unless templates is False."""
    name = raw.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    name = name.removeprefix("void ").split("(", 1)[0]
    head, sep, tail = name.partition("<")
    return head.split("::")[-1] + (sep + tail if templates else "")


def read(log, templates=True):
    """{kernel name: [{metric: value} per launch, in launch order]}."""
    launches = {}
    with open(log) as f:
        for row in csv.DictReader(ln for ln in f if ln.startswith('"')):
            per_id = launches.setdefault(kernel_name(row["Kernel Name"], templates), {})
            per_id.setdefault(row["ID"], {})[row["Metric Name"]] = float(
                row["Metric Value"].replace(",", ""))
    return {k: list(v.values()) for k, v in launches.items()}
