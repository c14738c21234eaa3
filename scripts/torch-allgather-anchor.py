"""The ceiling of moving a sample sort's exchange between the GPUs of one
host: torch.distributed over NCCL (device to device, NVLink where the GPUs
have it), timed with CUDA events, median of --reps after --warmup calls:
- all_gather_into_tensor of --bytes per rank (every rank receives every
  other rank's bytes: the sort's exchange moves at most that);
- all_to_all_single of --bytes per rank, split evenly (the sort's own
  pattern, its own piece included);
- on each rank, a copy of --bytes between the device and pinned host memory
  each way (cudaMemcpy through torch): the PCIe floor that a path through
  the host (clprim_mpi's, as OpenCL gives no device pointer to MPI) cannot
  beat.
The NCCL_* variables of the environment are used as they are (and printed).

Run on one host with one process per GPU:
    python3 -m torch.distributed.run --nproc_per_node=2 scripts/torch-allgather-anchor.py \
        --bytes 1073741824
"""
import argparse
import os

import torch
import torch.distributed as dist


def timed(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dist.barrier()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=int, default=1 << 30, help="bytes each rank sends")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    if rank == 0:
        nccl = {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}
        print(f"# torch {torch.__version__}, NCCL {torch.cuda.nccl.version()}, {size} ranks, "
              f"{args.bytes} bytes per rank, median of {args.reps}; environment: {nccl}")
    props = torch.cuda.get_device_properties(dev)
    pci = getattr(props, "pci_bus_id", "?")
    print(f"# rank {rank}: cuda:{local} {props.name} pci bus {pci}", flush=True)
    n = args.bytes // 4
    n -= n % size
    send = torch.rand(n, device=dev)
    gathered = torch.empty(n * size, device=dev)
    exchanged = torch.empty(n, device=dev)
    host = torch.empty(n, pin_memory=True)
    results = {}
    results["all_gather"] = timed(lambda: dist.all_gather_into_tensor(gathered, send), args.reps,
                                  args.warmup)
    results["all_to_all"] = timed(lambda: dist.all_to_all_single(exchanged, send), args.reps,
                                  args.warmup)
    results["d2h_pinned"] = timed(lambda: host.copy_(send, non_blocking=True), args.reps,
                                  args.warmup)
    results["h2d_pinned"] = timed(lambda: send.copy_(host, non_blocking=True), args.reps,
                                  args.warmup)
    gb = n * 4 / 1e9
    for name, ms in results.items():
        # GB/s: the bytes of this rank that moved (all_gather: received from the others)
        moved = gb * (size - 1) if name == "all_gather" else gb * (size - 1) / size \
            if name == "all_to_all" else gb
        print(f"rank {rank} {name:12s} {ms:9.3f} ms {moved / ms * 1e3:8.1f} GB/s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
