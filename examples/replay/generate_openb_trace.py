"""Write a synthetic openb-shaped trace (docs/trace-format.md) as DIR/nodes.csv and DIR/pods.csv.

    python examples/replay/generate_openb_trace.py --out DIR [--nodes N] [--pods N] [--seed S]
        [--gpu-spec-fraction F] [--load L]

The same arguments write the same files. examples/replay/openb-sample was written with
``--nodes 40 --pods 400 --seed 1``.
"""

from __future__ import annotations

import argparse
import os
import sys

from cluster.simulate.trace import synthetic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory to write nodes.csv and pods.csv into")
    parser.add_argument("--nodes", type=int, default=synthetic.DEFAULT_NODES)
    parser.add_argument("--pods", type=int, default=synthetic.DEFAULT_PODS)
    parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED)
    parser.add_argument("--gpu-spec-fraction", type=float, default=synthetic.DEFAULT_GPU_SPEC_FRACTION,
                        help="share of GPU pods that name the GPU models they accept")
    parser.add_argument("--load", type=float, default=synthetic.DEFAULT_LOAD,
                        help="peak GPUs asked, as a multiple of the cluster's GPUs")
    args = parser.parse_args(argv)
    try:
        nodes, pods = synthetic.generate_openb(args.nodes, args.pods, args.seed, load=args.load,
                                               gpu_spec_fraction=args.gpu_spec_fraction)
    except ValueError as exc:
        parser.error(str(exc))
    os.makedirs(args.out, exist_ok=True)
    for name, text in (("nodes.csv", nodes), ("pods.csv", pods)):
        with open(os.path.join(args.out, name), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    print(f"{args.out}: {args.nodes} nodes, {args.pods} pods", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
