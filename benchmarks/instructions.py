"""The instructions one 1,000-step chain costs, counted by callgrind: a yardstick that does not move
when other work shares the machine (wall time here moves 5-15 %; this repeats to about 1 %).

    python -m benchmarks.instructions            # needs valgrind; prints M instructions per chain
    python -m benchmarks.instructions --run 4    # the child: 4 chains forward and backward, no output

The parent runs the child under ``valgrind --tool=callgrind`` with 0 chains and with ``--chains``
chains, in fresh processes with ``PYTHONHASHSEED=0``; the difference divided by the count is one
chain (start-up and imports cancel). benchmarks/core_notes.md quotes its figures.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

from .chains import chain_varfunc

STEPS = 1_000  # the chain of part (a): 2,000 ops


def count(chains: int) -> int:
    """Instructions callgrind counts for a fresh process that runs this many chains."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    command += [sys.executable, "-m", "benchmarks.instructions", "--run", str(chains)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    match = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__)
    parser.add_argument("--chains", type=int, default=4, help="chains in the counted run (default 4)")
    parser.add_argument("--run", type=int, metavar="N", help="(the child) run N chains and exit")
    args = parser.parse_args(argv)
    if args.run is not None:
        for _ in range(args.run):
            chain_varfunc(STEPS)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind); nothing counted", file=sys.stderr)
        return 1
    per_chain = (count(args.chains) - count(0)) / args.chains
    print(f"{per_chain / 1e6:.1f} M instructions per {STEPS:,}-step chain ({2 * STEPS:,} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
