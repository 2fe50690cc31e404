"""Where the memory of large bodies stays once they are answered, in process.

The server judges a large body in one worker thread and then calls `heap.give_back`
(`malloc_trim(0)`) there; an idle server's RSS still settled 8-36 MiB above where it started
after 20 such bodies (bench/README.md, "Bounds for every input"). This runs the same work
without the HTTP layer, in a process of its own for each allocator setting: 20 bodies of
`bench_hostile`'s costliest shapes judged one after another in one worker thread (as
`endpoints._LARGE` does), then `give_back` in that thread, and reports where the memory is:

- the RSS (VmRSS) before the first body, after the 20 and after `give_back`;
- Python's allocator (obmalloc, `sys._debugmallocstats`): arenas still mapped and the bytes in
  blocks still in use;
- glibc's (`malloc_info`): bytes mapped by its arenas (`system current`) and free in them;
- memory held by live Python objects (`sys.getallocatedblocks`).

Settings: glibc's defaults (as the server ran before it called `heap.map_large_blocks`),
`MALLOC_ARENA_MAX=2`, `PYTHONMALLOC=malloc` (obmalloc off, for the comparison) and
`MALLOC_MMAP_THRESHOLD_=131072` (what `heap.map_large_blocks` sets in the server).

Run: `.venv/bin/python -m bench.bench_heap [SETTING ...]`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from jobguard.app.server.heap import MMAP_THRESHOLD

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r"""
import ctypes, ctypes.util, io, os, re, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, os.getcwd())
from jobguard.app.admission.review import handle_mutate, handle_validate
from jobguard.app.config import FileConfig
from jobguard.app.server.endpoints import _without_collector
from jobguard.app.server.heap import give_back
from bench.bench_hostile import costly_job, costly_job_ending_in, options_numbers

settings = FileConfig().to_settings()
libc = ctypes.CDLL(ctypes.util.find_library("c"))

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

def obmalloc():
    # sys._debugmallocstats writes to the C stderr: send fd 2 to a file meanwhile.
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode()
    def field(name):
        match = re.search(r"^# " + re.escape(name) + r"\s+=\s+([\d,]+)", text, re.M)
        return int(match.group(1).replace(",", "")) if match else -1
    arenas = field("arenas allocated current")
    return arenas, field("bytes in allocated blocks") / 2**20, field("bytes in available blocks") / 2**20

def glibc():
    buf = ctypes.c_char_p()
    size = ctypes.c_size_t()
    libc.open_memstream.restype = ctypes.c_void_p
    stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    libc.malloc_info(0, ctypes.c_void_p(stream))
    libc.fclose(ctypes.c_void_p(stream))
    text = ctypes.string_at(buf, size.value).decode()
    tail = text[text.rindex("</heap>"):]
    system = int(re.search(r'<system type="current" size="(\d+)"', tail).group(1))
    free = sum(int(n) for n in re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"', tail))
    mmap = int(re.search(r'<total type="mmap" count="\d+" size="(\d+)"', tail).group(1))
    heaps = text.count("<heap nr=")
    return heaps, system / 2**20, free / 2**20, mmap / 2**20

def line(label):
    arenas, used, available = obmalloc()
    heaps, system, free, mmap = glibc()
    print(f"    {label:24} RSS {rss():6.1f} MiB | obmalloc: {arenas:4d} arenas, {used:6.1f} MiB in"
          f" use, {available:5.1f} free in them | glibc: {heaps} arenas, {system:6.1f} MiB"
          f" mapped, {free:6.1f} free in them, {mmap:5.1f} mmapped | blocks {sys.getallocatedblocks()}")

bodies = {
    "zeros ending in 1e400 -> /validate": (handle_validate, options_numbers(b"1e400")),
    "small containers -> /validate": (handle_validate, costly_job()),
    "small containers ending in NaN -> /mutate": (handle_mutate, costly_job_ending_in(b"NaN")),
}
worker = ThreadPoolExecutor(max_workers=1)
handle_validate(b"{}", settings)
for what, (handler, body) in bodies.items():
    print(f"  {what}: {len(body) / 2**20:.2f} MiB x 20")
    line("before")
    started = time.perf_counter()
    for _ in range(20):
        copy = bytes(bytearray(body))  # a body of its own each time, as read from a socket
        worker.submit(_without_collector, handler, copy, settings).result()
        del copy
    seconds = time.perf_counter() - started
    line(f"after 20 ({seconds:.1f} s)")
    worker.submit(give_back).result()
    line("after give_back")
"""

SETTINGS = {
    "default": {},
    "MALLOC_ARENA_MAX=2": {"MALLOC_ARENA_MAX": "2"},
    "PYTHONMALLOC=malloc": {"PYTHONMALLOC": "malloc"},
    f"MALLOC_MMAP_THRESHOLD_={MMAP_THRESHOLD}": {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD)},
}


def main() -> None:
    chosen = sys.argv[1:] or list(SETTINGS)
    for name in chosen:
        extra = SETTINGS[name]
        print(name)
        env = {**os.environ, **extra}
        done = subprocess.run(
            [sys.executable, "-c", MEASURE], cwd=ROOT, env=env, text=True, timeout=900, check=False
        )
        if done.returncode != 0:
            print(f"  exited {done.returncode}")


if __name__ == "__main__":
    main()
