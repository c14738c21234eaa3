# Anchor timings: PyTorch's selection/compaction/argmax on an NVIDIA GPU, and per-row
# top-k (the torch anchor, torch_anchor.py, with per-row top-k rows added).
import torch, sys
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
torch.manual_seed(0)
x = torch.rand(N, device='cuda')
def med(f, reps=15):
    f(); f(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts)//2]
gb = N*4/1e9
k = N//2
for name, f in [
    ('torch_kthvalue_median', lambda: torch.kthvalue(x, k)),
    ('torch_topk_k=N/2', lambda: torch.topk(x, k, sorted=False)),
    ('torch_topk_k=1000', lambda: torch.topk(x, 1000, sorted=False)),
    ('torch_masked_select_p0.5', lambda: torch.masked_select(x, x > 0.5)),
    ('torch_nonzero_p0.5', lambda: torch.nonzero(x > 0.5)),
    ('torch_argmax', lambda: torch.argmax(x)),
    ('torch_sort', lambda: torch.sort(x)),
    ('torch_quantile_via_kth', lambda: torch.kthvalue(x, int(0.99*N))),
]:
    try:
        t = med(f)
        print(f'{name} N={N} ms={t:.3f} GB/s(one read)={gb/t*1e3:.0f}')
    except Exception as e:
        print(name, 'failed', e)

# Per-row top-k and k-th value (clprim_batched_topk / clprim_batched_nth_element's
# anchor): rows of 1024 and 32768 over the same N elements, and issue 13's shape,
# 4096 rows of 32768 (2^27 elements), k = 100.
del x
def rows(nrows, row, ks, kth):
    m = torch.rand(nrows, row, device='cuda')
    for k in ks:
        t = med(lambda: torch.topk(m, k, dim=1, sorted=True))
        print(f'torch_topk_rows rows={nrows}x{row} k={k} sorted ms={t:.3f}')
    if kth:
        t = med(lambda: torch.kthvalue(m, row // 2 + 1, dim=1))
        print(f'torch_kthvalue_rows rows={nrows}x{row} median ms={t:.3f}')
for row in (1024, 32768):
    rows(N // row, row, (8, 100), True)
rows(4096, 32768, (100,), False)
