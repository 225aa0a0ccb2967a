"""Scaling efficiency of bench_training_loop.py under torchrun: reads the result of a
1-rank run and of an N-rank run of the same configuration, writes
OUT/training_scaling_<policy>_<preset>_<default|tuned>[_graph]_ddpN_<device>.json with

  efficiency = (N-rank samples/s summed over ranks) / (N x 1-rank samples/s)

(per-rank samples/s from each rank's median step), and every rank's data_s and data share
(no rank may wait on data). Used by scripts/gpu-multi.sh:

    python3 bench/training_scaling.py ONE.json N.json OUT
"""

import json
import os
import sys

from bench_common import slug, write_json

SAME = ("device", "policy", "preset", "batch_size", "chunk", "d_model", "layers", "dec_layers",
        "ff", "ddp_tuned", "bucket_cap_mb", "cuda_graph", "frames")


def main(one_path, many_path, out):
    one, many = json.load(open(one_path)), json.load(open(many_path))
    differ = [k for k in SAME if one.get(k) != many.get(k)]
    if differ:
        raise SystemExit(f"{one_path} and {many_path} differ in {', '.join(differ)}")
    n = many["world_size"]
    single = one["per_rank"][0]["samples_per_s"]
    total = sum(r["samples_per_s"] for r in many["per_rank"])
    result = {"benchmark": "training_loop_scaling", "device": many["device"],
              "config": {k: many.get(k) for k in SAME}, "world_size": n,
              "one_rank": one["per_rank"][0], "ranks": many["per_rank"],
              "samples_per_s_one_rank": single, "samples_per_s_all_ranks": total,
              "efficiency": total / (n * single), "inputs": [one_path, many_path],
              "commands": [one["command"], many["command"]], "commit": many["commit"]}
    print(f"{many['device']}, {many['policy']} ({many['preset']}), ddp_tuned "
          f"{many['ddp_tuned']}, cuda_graph {many.get('cuda_graph', False)}: 1 rank "
          f"{single:,.0f} samples/s, {n} ranks {total:,.0f} samples/s: "
          f"{100 * result['efficiency']:.1f} % of linear")
    for r in many["per_rank"]:
        print(f"  rank {r['rank']}: data {r['data_s_median'] * 1e3:.2f} ms "
              f"({100 * r['data_fraction']:.1f} % of the step), update "
              f"{r['updt_s_median'] * 1e3:.2f} ms")
    ddp = ("tuned" if many["ddp_tuned"] else "default") + ("_graph" if many.get("cuda_graph")
                                                           else "")
    name = f"training_scaling_{many['policy']}_{many['preset']}_{ddp}_ddp{n}_{slug(many['device'])}"
    write_json(os.path.join(out, name + ".json"), result)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
