"""How long a password hash and a password sign-in take (scrypt, the parameters in use).

    python bench/password_hash.py --runs 20

Prints the median and p95 of hashing a new password, verifying one, and verifying an unknown
name's attempt against the dummy hash (which must cost the same), and the scrypt memory per hash.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from loci.auth.passwords import CURRENT, dummy_hash, hash_password, verify_password


def timed(call: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, round(0.95 * len(samples)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    stored = hash_password("correct horse battery")
    dummy_hash()  # made once per process; not part of a sign-in
    rows = {
        "hash a new password": timed(lambda: hash_password("correct horse battery"), runs),
        "verify (known name)": timed(lambda: verify_password("wrong guess!", stored), runs),
        "verify (unknown name, dummy)": timed(
            lambda: verify_password("wrong guess!", dummy_hash()), runs
        ),
    }
    print(f"scrypt {CURRENT.text()}: {CURRENT.memory_bytes // 2**20} MiB per hash, {runs} runs")
    for name, (p50, p95) in rows.items():
        print(f"{name:32s} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")


if __name__ == "__main__":
    main()
