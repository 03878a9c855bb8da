/**
 * The PyTorch all-reduce benchmark the nccl stage installs (`nccl.bench-tools`, path 2 of docs/STAGES.md
 * §3.9) and runs under torchrun on every host. It is a real program: it runs unchanged on real
 * clusters. Output per fixtures/h200-x2/nccl_info_torch_allreduce.txt: `# all_reduce sum float32,
 * world=<n>`, then one row per size `<bytes> <time>us algbw <x> GB/s busbw <y> GB/s` (busbw =
 * algbw × 2(n−1)/n, as nccl-tests reports all_reduce). Times are the slowest rank's mean over the
 * timed iterations; each size is also checked for correct sums, and wrong results fail the run.
 */

export const BENCH_PATH = '/opt/l20/bin/l20-allreduce-bench.py';

/** The first docstring line: how the lab (and a reader) recognises the program. */
export const BENCH_MARK = 'l20-setup all-reduce benchmark';

export const BENCH_SCRIPT = `#!/usr/bin/env python3
"""${BENCH_MARK} (torch.distributed with NCCL), started by torchrun on every node.

Prints on global rank 0:
  # all_reduce sum float32, world=<n>
  <bytes> <time>us algbw <x> GB/s busbw <y> GB/s
busbw = algbw * 2(n-1)/n, the bus bandwidth nccl-tests reports for all_reduce. The time of a size
is the mean over --iters timed all-reduces on the slowest rank. Every size is checked once for
correct sums; wrong results make the run exit 1.
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist

UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
ELEMENT_BYTES = 4  # float32


def parse_size(text):
    t = text.strip().upper()
    if t.endswith("B"):
        t = t[:-1]
    unit = t[-1:] if t[-1:] in UNITS else ""
    number = t[: len(t) - len(unit)]
    return int(float(number) * UNITS[unit])


def sizes(lo, hi, factor):
    size = lo
    while size <= hi:
        yield size
        size = size * factor if factor > 1 else size + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-bytes", type=parse_size, default=8)
    parser.add_argument("--max-bytes", type=parse_size, default=parse_size("1G"))
    parser.add_argument("--factor", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    # device_id makes the NCCL communicator start now, so configuration errors surface here.
    dist.init_process_group("nccl", device_id=device)
    rank = dist.get_rank()
    world = dist.get_world_size()
    if rank == 0:
        print(f"# all_reduce sum float32, world={world}", flush=True)

    wrong = 0
    for size in sizes(args.min_bytes, args.max_bytes, args.factor):
        count = max(1, size // ELEMENT_BYTES)
        nbytes = count * ELEMENT_BYTES
        # Correctness: every rank contributes its rank + 1; the sum is known in closed form.
        check = torch.full((count,), float(rank + 1), dtype=torch.float32, device=device)
        dist.all_reduce(check)
        expected = world * (world + 1) / 2
        wrong += int((check != expected).sum().item())
        del check

        buf = torch.zeros(count, dtype=torch.float32, device=device)
        for _ in range(args.warmup):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        dist.barrier(device_ids=[local_rank])
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            dist.all_reduce(buf)
        end.record()
        torch.cuda.synchronize()
        mean_us = start.elapsed_time(end) * 1000.0 / args.iters
        slowest = torch.tensor([mean_us], dtype=torch.float64, device=device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        us = slowest.item()
        del buf

        algbw = nbytes / us / 1e3  # bytes per microsecond = MB/s; / 1e3 = GB/s
        busbw = algbw * 2 * (world - 1) / world
        if rank == 0:
            print(f"{nbytes:12d} {us:10.1f}us algbw {algbw:8.2f} GB/s busbw {busbw:8.2f} GB/s", flush=True)

    total_wrong = torch.tensor([wrong], dtype=torch.int64, device=device)
    dist.all_reduce(total_wrong)
    dist.destroy_process_group()
    if total_wrong.item() != 0:
        if rank == 0:
            print(f"# wrong results: {total_wrong.item()} elements", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
`;
