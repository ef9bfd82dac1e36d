"""How long a turn's checkpoint takes on a large checkout, against plain git, measured in one run.

    python3 bench/checkpoints.py [--files 10000] [--mib 200] [--rounds 1]

Lays out a tree of ``--files`` files, ~``--mib`` MiB in all (mostly small source-like files of
1-16 KiB in 200 folders, plus 50 binary files of a few MiB, under the size limit), then prints:

- (a) the first snapshot (a new store, an empty index: every file hashed and stored) against
  `git add -A` into a fresh index of a fresh repository, the same tree: the ratio (goal <= 2x);
- (b) a snapshot after changing 5 files (the case of every turn) in ms (goal <= 150 ms), and
  its ratio to `git status --porcelain` in a repository of the same tree, as the floor of
  "find what changed".

Each figure is the fastest of a few runs (first snapshots: ``--rounds``, default 1, each in a
new store, interleaved with the baseline; later ones: 5), after one read of the whole tree so
the page cache is warm for both sides; every run is printed too (a shared machine's disk makes
them vary). Also printed: a second chat's first snapshot, which starts from the first chat's
index. Nothing is asserted; ~1 min on 2 CPUs.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from storage.checkpoints import SNAPSHOT_SECONDS, CheckpointStore

BIG_FILES = 50
WORDS = [b"const", b"return", b"function", b"import", b"value", b"props", b"export", b"=>", b"{", b"}",
         b"if", b"else", b"await", b"this.state", b"null", b"undefined", b"\n", b"\n  ", b"\n    "]


def lay_out(root: str, files: int, total: int) -> int:
    rng = random.Random(28)
    big_each = (total // 2) // BIG_FILES
    small = files - BIG_FILES
    small_each = (total - big_each * BIG_FILES) // small
    written = 0
    text = b" ".join(rng.choice(WORDS) for _ in range(400_000))  # ~2.4 MB to cut small files from
    for n in range(small):
        folder = os.path.join(root, f"src/pkg{n % 200:03d}")
        os.makedirs(folder, exist_ok=True)
        size = rng.randint(small_each // 8, small_each * 2 - small_each // 8)
        start = rng.randrange(0, len(text) - size)
        with open(os.path.join(folder, f"mod{n:05d}.js"), "wb") as handle:
            written += handle.write(text[start:start + size])
    os.makedirs(os.path.join(root, "assets"), exist_ok=True)
    for n in range(BIG_FILES):
        with open(os.path.join(root, "assets", f"blob{n:02d}.bin"), "wb") as handle:
            written += handle.write(os.urandom(big_each))
    with open(os.path.join(root, ".gitignore"), "w") as handle:
        handle.write("node_modules/\n*.log\n")
    return written


def warm(root: str) -> None:
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                while handle.read(1 << 20):
                    pass


def plain_git(git_dir: str, work_tree: str, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if args[0] == "init":
        args, work_tree = (*args, git_dir), os.path.dirname(git_dir)
    else:
        env.update(GIT_DIR=git_dir, GIT_WORK_TREE=work_tree)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
    subprocess.run(["git", *args], env=env, cwd=work_tree, check=True, capture_output=True)


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def change_five(root: str, round_: int) -> None:
    for n in range(5):
        path = os.path.join(root, f"src/pkg{(n * 37) % 200:03d}/mod{n * 1999 + 7:05d}.js")
        with open(path, "ab") as handle:
            handle.write(b"\n// turn %d edit %d\n" % (round_, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mib", type=float, default=200.0)
    parser.add_argument("--rounds", type=int, default=1, help="first snapshots (and baselines) to take")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="devhost-bench-checkpoints-")
    try:
        tree = os.path.join(scratch, "tree")
        os.makedirs(tree)
        start = time.perf_counter()
        size = lay_out(tree, args.files, int(args.mib * 1024 * 1024))
        laid = time.perf_counter() - start
        warm(tree)

        firsts, bares = [], []
        for n in range(args.rounds):  # interleaved, each in a fresh store / fresh repository
            # a deadline far enough to measure; the verdict below compares with the real one
            store = CheckpointStore(os.path.join(scratch, f"state{n}"), tree, snapshot_seconds=300)
            snap = None

            def first():
                nonlocal snap
                snap = store.snapshot("chat-bench", "bench/t0/before")
            firsts.append(timed(first))
            assert snap.commit, snap.error
            bare = os.path.join(scratch, f"bare{n}.git")
            plain_git(bare, tree, "init", "-q", "--bare")
            bares.append(timed(lambda: plain_git(bare, tree, "add", "-A")))
        plain_git(bare, tree, "commit", "-qm", "tree")  # the status baseline: a repository of the tree

        later, statuses = [], []
        for round_ in range(1, 6):
            change_five(tree, round_)
            later.append(timed(lambda: store.snapshot("chat-bench", f"bench/t{round_}/after")))
            statuses.append(timed(lambda: plain_git(bare, tree, "status", "--porcelain")))
        first, add, again, status = min(firsts), min(bares), min(later), min(statuses)
        seeded = timed(lambda: store.snapshot("chat-other", "other/t1/before"))

        print(f"tree: {args.files} files, {size / 1024 / 1024:.0f} MiB (laid out in {laid:.1f} s); "
              f"git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
              f"{os.cpu_count()} CPUs")
        print(f"(a) first snapshot:          {first * 1000:8.0f} ms   git add -A, fresh index: {add * 1000:8.0f} ms"
              f"   ratio {first / add:.2f}x  (goal <= 2x: {'met' if first <= 2 * add else 'missed'}; "
              f"{'within' if first <= SNAPSHOT_SECONDS else 'past'} the {SNAPSHOT_SECONDS:g} s deadline)")
        print(f"    a second chat's first snapshot (seeded from the first chat's index): {seeded * 1000:.1f} ms")
        print(f"(b) snapshot after 5 edits:  {again * 1000:8.1f} ms   git status --porcelain:  {status * 1000:8.1f} ms"
              f"   ratio {again / status:.2f}x  (goal <= 150 ms: {'met' if again <= 0.150 else 'missed'})")
        print(f"    all runs, ms: first {[round(t * 1000) for t in firsts]}, "
              f"add -A {[round(t * 1000) for t in bares]}, "
              f"after 5 edits {[round(t * 1000, 1) for t in later]}, status {[round(t * 1000, 1) for t in statuses]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
