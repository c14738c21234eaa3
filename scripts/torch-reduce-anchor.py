# The PyTorch anchors of the histogram and reduce-by-key figures:
# torch.bincount and index_add_ on the GPU, 2^28 elements unless told,
# medians of 20 runs timed with CUDA events after two warm-up calls.
# The torch anchor (torch_anchor.py) covers selection, compaction and argmax;
# this covers what that one lacks. Run on the GPU machine:
#   python3 scripts/torch-reduce-anchor.py 268435456
import sys

import torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
K = 1 << 20
torch.manual_seed(0)


def med(f, reps=20):
    f(); f(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


x = torch.rand(N, device='cuda')
keys256 = torch.randint(0, 256, (N,), device='cuda', dtype=torch.int64)
keysK = torch.randint(0, K, (N,), device='cuda', dtype=torch.int64)
sortedK = torch.arange(N, device='cuda', dtype=torch.int64) * K // N
vals = torch.rand(N, device='cuda', dtype=torch.float64)
out = torch.zeros(K, device='cuda', dtype=torch.float64)
cases = [
    ('torch_bincount int64 keys 256 bins', lambda: torch.bincount(keys256, minlength=256)),
    ('torch_bincount int64 keys 2^20 bins', lambda: torch.bincount(keysK, minlength=K)),
    ('torch_histc float 256 bins', lambda: torch.histc(x, bins=256, min=0, max=1)),
    ('torch_histc float 2^20 bins', lambda: torch.histc(x, bins=K, min=0, max=1)),
    ('torch_index_add_ f64 into 2^20 keys random', lambda: out.zero_().index_add_(0, keysK, vals)),
    ('torch_index_add_ f64 into 2^20 keys sorted', lambda: out.zero_().index_add_(0, sortedK, vals)),
]
for name, f in cases:
    try:
        print(f'{name} N={N} ms={med(f):.3f}', flush=True)
    except Exception as e:  # report and go on: one failing anchor should not hide the others
        print(name, 'failed', e, flush=True)
