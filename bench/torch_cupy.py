#!/usr/bin/env python3
"""torch and CuPy rows for the workloads of bench/algos.cu (reduce, histogram, scan).

Every workload runs for n = 2^kmin .. 2^kmax on one GPU. Its input is generated on the device
(outside any timing), checked once against numpy for n <= 2^20, then timed: 5 warm-up calls, then
the median of --reps calls, each between two CUDA events on one stream (torch's; CuPy runs on it
through cupy.cuda.ExternalStream, so both libraries and the events share it).
  host: start event, call, stop event on an idle stream; the time includes the host's launch latency.
  cold: before each call a memset of max(2 x L2, 128 MiB) flushes L2, then a spin kernel holds the
        stream while the host enqueues start, call and stop, so the events time what the GPU does.
        The spin lasts 2.5x the call's host enqueue time measured in the warm-ups (at least ~20 us,
        at most ~1 ms, 2000 cycles per us). Calls that synchronize inside (torch.bincount and
        cupy.bincount read max(x) back to the host) still include host latency in this mode.
Exclusive scans have no library call: both time an inclusive cumsum into a preallocated output,
then subtract the input from it in place (y -= x), both inside the timed region.
CSV columns match the C++ bench: timing,workload,n,impl,ms,gbps; gbps = bytes / ms / 1e6, bytes =
n * sizeof(T) (reduce, histogram) or 2 * n * sizeof(T) (scan). Unsupported calls print `n/a: ...`.
"""
import argparse, csv, statistics, sys, time

def first_line(e):
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]

try:
    import numpy as np
except Exception:  # only the correctness checks need it
    np = None
try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError('torch.cuda.is_available() is False')
except Exception as _e:
    torch = None
    print(f'skipped: torch not importable ({first_line(_e)})', flush=True)
try:
    import cupy as cp
except Exception as _e:
    cp = None
    print(f'skipped: cupy not importable ({first_line(_e)})', flush=True)

HEADER = ['timing', 'workload', 'n', 'impl', 'ms', 'gbps']
WARMUP = 5
CYCLES_PER_US = 2000            # H200 SM clock is at most ~1.98 GHz: a spin lasts at least this
SPIN_MIN, SPIN_MAX = 40_000, 2_000_000
CHECK_MAX_N = 1 << 20
# key: (numpy dtype, dtype of the signed/float torch tensor that holds the data, bytes)
TYPES = {'u8': ('uint8', 'uint8', 1), 'u16': ('uint16', 'int16', 2),
         'u32': ('uint32', 'int32', 4), 'i32': ('int32', 'int32', 4),
         'u64': ('uint64', 'int64', 8), 'i64': ('int64', 'int64', 8),
         'f32': ('float32', 'float32', 4), 'f64': ('float64', 'float64', 8)}
SIX = ('u32', 'i32', 'u64', 'i64', 'f32', 'f64')
EVEN_RANGE = {'u16': (0, 65535), 'u32': (0, 4294967295), 'f32': (0.0, 1.0)}
SPIN_SRC = r'''extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64(); while (clock64() - t0 < cycles) { } }'''

def workloads():
    """(name, kind, op, type key) in the C++ bench's naming."""
    w = [(f'reduce {op} {t}', 'reduce', op, t) for op in ('sum', 'min', 'max') for t in SIX]
    w += [(f'reduce deterministic_sum {t}', 'reduce', 'sum', t) for t in ('f32', 'f64')]
    w.append(('histogram bytes', 'bincount', None, 'u8'))
    w += [(f'histogram even {t}', 'even', None, t) for t in ('u16', 'u32', 'f32')]
    w += [(f'scan {m} {t}', 'scan', m, t) for m in ('inclusive', 'exclusive') for t in SIX]
    return w

class NA(Exception):
    """The implementation does not support this workload."""

_said = set()

def say_once(msg):
    if msg not in _said:
        _said.add(msg)
        print(msg, flush=True)

class Clock:
    """One stream for both libraries, its timing events, the L2 flush buffer and the spin."""

    def __init__(self, flush_bytes):
        if torch is not None:
            self.stream = torch.cuda.Stream()
            torch.cuda.set_stream(self.stream)
            if cp is not None:
                self.cstream = cp.cuda.ExternalStream(self.stream.cuda_stream)
                self.cstream.use()
            self.buf = torch.empty(flush_bytes, dtype=torch.uint8, device='cuda')
            self.start, self.stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        else:
            self.stream = cp.cuda.Stream(non_blocking=True)
            self.stream.use()
            self.buf = cp.empty(flush_bytes, dtype=cp.uint8)
            self.start, self.stop = cp.cuda.Event(), cp.cuda.Event()
        self.kernel = None
        if (torch is None or not hasattr(torch.cuda, '_sleep')) and cp is not None:
            self.kernel = cp.RawKernel(SPIN_SRC, 'spin')

    def flush(self):
        self.buf.zero_() if torch is not None else self.buf.fill(0)

    def spin(self, cycles):
        if self.kernel is not None:
            self.kernel((1,), (1,), (np.int64(cycles),))
        elif torch is not None and hasattr(torch.cuda, '_sleep'):
            torch.cuda._sleep(cycles)
        else:
            say_once('warning: no spin kernel available; cold times include host enqueue')

    def sync(self):
        self.stream.synchronize()

    def elapsed_ms(self):
        if torch is not None:
            return self.start.elapsed_time(self.stop)
        return cp.cuda.get_elapsed_time(self.start, self.stop)

def measure(fn, reps, cold, clk):
    """Median event time (ms) of `reps` calls after WARMUP calls."""
    enq = []
    for _ in range(WARMUP):
        t0 = time.perf_counter()
        fn()
        enq.append(time.perf_counter() - t0)
    clk.sync()
    cycles = int(2.5 * statistics.median(enq) * 1e6 * CYCLES_PER_US)
    cycles = min(max(cycles, SPIN_MIN), SPIN_MAX)
    times = []
    for _ in range(reps):
        if cold:
            clk.flush()
            clk.spin(cycles)
        clk.start.record(clk.stream)
        r = fn()
        clk.stop.record(clk.stream)
        clk.stop.synchronize()
        times.append(clk.elapsed_ms())
        del r
    return statistics.median(times)

def make_data(t, n):
    """Device input for each impl ({'torch': tensor|None, 'CuPy': array|None}), a reason when the
    torch view is unavailable, and a numpy copy for n <= CHECK_MAX_N."""
    np_name, hold_name, size = TYPES[t]
    data, why = {}, None
    if torch is not None:
        hold = getattr(torch, hold_name)
        if t[0] == 'f':
            sv = torch.rand(n, dtype=hold, device='cuda')
        else:  # uniform random bytes = integers uniform over the full range of the type
            sv = torch.randint(0, 256, (n * size,), dtype=torch.uint8, device='cuda').view(hold)
        data['torch'] = sv
        if np_name != hold_name:
            try:
                data['torch'] = sv.view(getattr(torch, np_name))
            except Exception as e:
                data['torch'], why = None, f'no torch.{np_name} view ({first_line(e)})'
        if cp is not None:
            data['CuPy'] = cp.from_dlpack(sv).view(np_name)
    else:
        if t[0] == 'f':
            data['CuPy'] = cp.random.random(n, dtype=np_name)
        else:
            data['CuPy'] = cp.random.randint(0, 256, size=n * size, dtype=cp.uint8).view(np_name)
    host = None
    if n <= CHECK_MAX_N and np is not None:
        if cp is not None:
            host = cp.asnumpy(data['CuPy'])
        else:
            host = sv.cpu().numpy().view(np_name)
    return data, why, host

def build_torch(kind, op, t, x):
    """A no-argument callable running the torch call on x."""
    if kind == 'reduce':
        f = {'sum': torch.sum, 'min': torch.amin, 'max': torch.amax}[op]
        return lambda: f(x)
    if kind == 'bincount':
        try:
            torch.bincount(x, minlength=256)
            return lambda: torch.bincount(x, minlength=256)
        except Exception as e:  # converted here, outside the timed region
            say_once(f'note: torch.bincount rejects uint8 ({first_line(e)}); '
                     'input converted to int32 before timing')
            xi = x.to(torch.int32)
            return lambda: torch.bincount(xi, minlength=256)
    if kind == 'even':
        if t != 'f32':
            raise NA('torch.histc supports floating-point inputs only')
        return lambda: torch.histc(x, bins=256, min=0.0, max=1.0)
    y = torch.empty_like(x)
    try:  # dtype=x.dtype: same-type (wrapping) scan; torch would promote integers to int64
        torch.cumsum(x, 0, dtype=x.dtype, out=y)
        scan = lambda: torch.cumsum(x, 0, dtype=x.dtype, out=y)
    except Exception as e:
        torch.cumsum(x, 0, dtype=x.dtype)  # raises (-> n/a) if cumsum itself is unsupported
        say_once(f'note: torch.cumsum out= failed for {t} ({first_line(e)}); timing without out=')
        scan = lambda: torch.cumsum(x, 0, dtype=x.dtype)
    if op == 'inclusive':
        return scan

    def exclusive():  # inclusive scan, then y -= x, both timed
        r = scan()
        return r.sub_(x)
    return exclusive

def build_cupy(kind, op, t, x):
    """A no-argument callable running the CuPy call on x."""
    if kind == 'reduce':
        f = {'sum': cp.sum, 'min': cp.min, 'max': cp.max}[op]
        return lambda: f(x)
    if kind == 'bincount':
        return lambda: cp.bincount(x, minlength=256)
    if kind == 'even':
        lo, hi = EVEN_RANGE[t]
        return lambda: cp.histogram(x, bins=256, range=(lo, hi))[0]
    y = cp.empty_like(x)
    if op == 'inclusive':
        return lambda: cp.cumsum(x, out=y)

    def exclusive():  # inclusive scan, then y -= x, both timed
        cp.cumsum(x, out=y)
        return cp.subtract(y, x, out=y)
    return exclusive

def to_numpy(r):
    if cp is not None and isinstance(r, cp.ndarray):
        return cp.asnumpy(r)
    name = str(r.dtype).split('.')[-1]
    if name in ('uint16', 'uint32', 'uint64'):  # go through the signed type of the same size
        return r.view(getattr(torch, 'int' + name[4:])).cpu().numpy().view(name)
    return r.cpu().numpy()

def check(kind, op, t, r, h):
    """None if result r (numpy) agrees with the reference computed from input h, else a reason."""
    if kind == 'reduce':
        if t[0] == 'f':
            ref = float(h.sum(dtype=np.float64) if op == 'sum' else getattr(h, op)())
            ok = abs(float(r) - ref) <= (1e-3 * abs(ref) if op == 'sum' else 0.0)
        else:
            ref = int(h.sum(dtype=np.int64 if t[0] == 'i' else np.uint64)) if op == 'sum' \
                else int(getattr(h, op)())
            ok = (int(r) - ref) % (1 << 64) == 0   # sums wrap modulo 2^64
        return None if ok else f'got {r}, expected {ref}'
    if kind == 'bincount':
        ref = np.bincount(h, minlength=256)
        return None if np.array_equal(r, ref) else f'counts differ (sum {r.sum()} vs {ref.sum()})'
    if kind == 'even':
        lo, hi = EVEN_RANGE[t]
        inside = int(np.count_nonzero((h >= lo) & (h <= hi)))
        ok = r.size == 256 and int(r.sum()) == inside
        return None if ok else f'{r.size} bins summing to {r.sum()}, expected 256 and {inside}'
    if t[0] == 'f':
        ref = np.cumsum(h, dtype=np.float64)
        if op == 'exclusive':
            ref -= h
        bad = np.abs(r.astype(np.float64) - ref) > 1e-3 * np.maximum(1.0, np.abs(ref))
    else:
        ref = np.cumsum(h, dtype=h.dtype)
        if op == 'exclusive':
            ref = ref - h
        bad = r != ref if r.shape == ref.shape else np.ones(1, bool)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return f'{int(np.count_nonzero(bad))} elements differ, first at {i}'

def run_size(name, kind, op, t, k, reps, timings, impls, clk, writer, results):
    """Check and time every impl at n = 2^k; locals die on return so the memory can be freed."""
    n = 1 << k
    try:
        data, why, host = make_data(t, n)
    except Exception as e:
        print(f'n/a: data {name} 2^{k}: {first_line(e)}', flush=True)
        return
    nbytes = n * TYPES[t][2] * (2 if kind == 'scan' else 1)
    for impl, build in impls:
        x = data.get(impl)
        try:
            if x is None:
                raise NA(why)
            fn = build(kind, op, t, x)
            r = fn()
            clk.sync()
            if host is not None:
                bad = check(kind, op, t, to_numpy(r), host)
                if bad:
                    print(f'MISMATCH: {impl} {name} 2^{k}: {bad}', flush=True)
            del r
            for tm in timings:
                ms = measure(fn, reps, tm == 'cold', clk)
                gbps = nbytes / ms / 1e6
                writer.writerow([tm, name, n, impl, f'{ms:.6g}', f'{gbps:.3f}'])
                results.setdefault((tm, impl), []).append((k, ms, gbps))
        except Exception as e:
            say_once(f'n/a: {impl} {name}: {first_line(e)}')
        fn = None

def free_memory():
    if torch is not None:
        torch.cuda.empty_cache()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()

def summary(tm, name, impls, results):
    parts = []
    for impl, _ in impls:
        rows = results.get((tm, impl))
        if not rows:
            parts.append(f'{impl}: n/a')
            continue
        (k0, ms0, _), (k1, _, g1) = rows[0], rows[-1]
        peak = max(g for _, _, g in rows)
        parts.append(f'{impl}: 2^{k0} {ms0 * 1e3:.2f} us, 2^{k1} {g1:.1f} GB/s, peak {peak:.1f}')
    print(f'{tm:<4} {name:<30} ' + ' | '.join(parts), flush=True)

def default_reps(n):
    return 200 if n <= 1 << 20 else 50 if n <= 1 << 26 else 20

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--csv', required=True, help='output CSV file')
    ap.add_argument('--kmin', type=int, default=10)
    ap.add_argument('--kmax', type=int, default=30)
    ap.add_argument('--timing', choices=('cold', 'host', 'both'), default='both')
    ap.add_argument('--only', default=None, help='run only workloads whose name contains this')
    ap.add_argument('--reps', type=int, default=None, help='timed calls per point')
    args = ap.parse_args()
    if torch is None and cp is None:
        sys.exit('neither torch nor cupy is importable')
    if torch is not None:
        props = torch.cuda.get_device_properties(0)
        dev, l2 = props.name, int(getattr(props, 'L2_cache_size', 0) or 0)
    else:
        props = cp.cuda.runtime.getDeviceProperties(0)
        dev, l2 = props['name'].decode(), int(props.get('l2CacheSize', 0))
    print(f'torch {torch.__version__ if torch else "-"}, cupy {cp.__version__ if cp else "-"}, '
          f'device {dev}, L2 {l2 / 2**20:.1f} MiB', flush=True)
    flush_bytes = max(2 * (l2 or 50 << 20), 128 << 20)
    clk = Clock(flush_bytes)
    impls = ([('torch', build_torch)] if torch is not None else []) + \
            ([('CuPy', build_cupy)] if cp is not None else [])
    timings = ['cold', 'host'] if args.timing == 'both' else [args.timing]
    with open(args.csv, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(HEADER)
        for name, kind, op, t in workloads():
            if args.only and args.only not in name:
                continue
            results = {}
            for k in range(args.kmin, args.kmax + 1):
                reps = args.reps or default_reps(1 << k)
                run_size(name, kind, op, t, k, reps, timings, impls, clk, writer, results)
                free_memory()
                f.flush()
            for tm in timings:
                summary(tm, name, impls, results)

if __name__ == '__main__':
    main()
