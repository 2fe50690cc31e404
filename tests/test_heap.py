"""`app.server.heap`: with large blocks mapped on their own, memory freed after large requests
goes back to the system; without, glibc keeps it resident (bench.bench_heap measures the
server's own work)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

SCRIPT = """
import sys
from jobguard.app.server.heap import map_large_blocks

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

if sys.argv[1] == "mapped":
    assert map_large_blocks()
big = bytearray(16 << 20)  # freed: glibc raises its mmap threshold to 16 MiB unless fixed
del big
before = rss()
freed, kept = [], []
for _ in range(40):  # 40 MiB freed between 8 MiB that stays
    freed.append(bytearray(1 << 20))
    kept.append(bytearray(200 << 10))
del freed
print(rss() - before)
"""


def grown_mib(mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=60, check=True
    )
    return float(done.stdout)


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="mallopt and /proc are glibc's and Linux's (elsewhere map_large_blocks does nothing)",
)
def test_freed_large_blocks_leave_the_resident_set() -> None:
    assert grown_mib("default") > 40  # the 40 MiB freed stay resident between the kept blocks
    assert grown_mib("mapped") < 12  # only the 8 MiB kept
