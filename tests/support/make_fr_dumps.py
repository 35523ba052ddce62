#!/usr/bin/env python3
"""Writes PyTorch Flight Recorder dumps for an emulated job, byte for byte as
PyTorch writes them (docs/design/pytorch-fr.md): torch::jit::Pickler,
protocol 2, no type tags; strings memoized by value (BINPUT, BINGET), frame
dicts shared between entries memoized by identity, dicts as EMPTY_DICT MARK
... SETITEMS, lists as EMPTY_LIST MARK ... APPENDS, ints as BININT1 /
BININT2 / BININT / LONG1, floats as big-endian BINFLOAT. No torch needed.

  make_fr_dumps.py OUT_DIR --ranks 8 --steps 40 --fault behind --culprit 5
  faults: none | behind (culprit one collective behind, outside NCCL) |
          missing (culprit never dumped) | mismatch (culprit's last collective
          has another size) | dtype (another dtype)
  --tp T adds tensor-parallel groups of T ranks (pg "1".., desc "tp").
  --json writes the JSON variant (_dump_nccl_trace_json) instead.
  --names host: file names carry host names (pytorch#140879).
  --bad adds an 87-byte dump, a truncated dump and a corrupted one.
"""
import argparse
import json
import os
import struct
import time

BINPUT, LONG_BINPUT, BINGET, LONG_BINGET = b"q", b"r", b"h", b"j"


class Pickler:
    """The subset of torch::jit::Pickler (pickler.cpp) FR dumps use."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")  # PROTO 2
        self.memo_id = 0
        self.strings = {}
        self.shared = {}  # id(obj) -> memo id, for values marked shared

    def _put(self):
        if self.memo_id <= 255:
            self.out += BINPUT + bytes([self.memo_id])
        else:
            self.out += LONG_BINPUT + struct.pack("<I", self.memo_id)
        self.memo_id += 1
        return self.memo_id - 1

    def _get(self, i):
        if i <= 255:
            self.out += BINGET + bytes([i])
        else:
            self.out += LONG_BINGET + struct.pack("<I", i)

    def push(self, v, shared_ids=()):
        key = id(v)
        if key in shared_ids:
            if key in self.shared:
                self._get(self.shared[key])
                return
            self._push(v, shared_ids)
            self.shared[key] = self._put()
            return
        self._push(v, shared_ids)

    def _push(self, v, shared_ids):
        o = self.out
        if v is None:
            o += b"N"
        elif v is True:
            o += b"\x88"
        elif v is False:
            o += b"\x89"
        elif isinstance(v, int):
            if 0 <= v <= 255:
                o += b"K" + bytes([v])
            elif 0 <= v <= 65535:
                o += b"M" + struct.pack("<H", v)
            elif -(2**31) <= v < 2**31:
                o += b"J" + struct.pack("<i", v)
            else:
                o += b"\x8a\x08" + struct.pack("<q", v)
        elif isinstance(v, float):
            o += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            if v in self.strings:
                self._get(self.strings[v])
            else:
                b = v.encode()
                o += b"X" + struct.pack("<I", len(b)) + b
                self.strings[v] = self._put()
        elif isinstance(v, tuple):
            if len(v) == 0:
                o += b")"
            elif len(v) <= 3:
                for x in v:
                    self.push(x, shared_ids)
                o += bytes([0x84 + len(v)])
            else:
                o += b"("
                for x in v:
                    self.push(x, shared_ids)
                o += b"t"
        elif isinstance(v, list):
            o += b"]("
            for x in v:
                self.push(x, shared_ids)
            o += b"e"
        elif isinstance(v, dict):
            o += b"}("
            for k, x in v.items():
                self.push(k, shared_ids)
                self.push(x, shared_ids)
            o += b"u"
        else:
            raise TypeError(type(v))

    def finish(self):
        self.out += b"."
        return bytes(self.out)


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


def job(args):
    """Yields (rank, (pg_config, pg_status, entries, shared)) of the emulated job."""
    n, T = args.ranks, args.tp
    groups = [("0", "default_pg", list(range(n)))]
    if T > 1:
        for g in range(n // T):
            groups.append((str(g + 1), "tp", list(range(g * T, g * T + T))))
    c10d = "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py"
    f_ar = frame("all_reduce", c10d, 2806)
    f_wrap = frame("wrapper", "/usr/lib/python3/site-packages/torch/distributed/c10d_logger.py", 81)
    f_step = frame("train_step", "/job/train.py", 42)
    f_main = frame("main", "/job/train.py", 120)
    f_mod = frame("<module>", "/job/train.py", 131)
    f_tp = frame("tp_reduce", "/job/model.py", 77)
    normal = [f_ar, f_wrap, f_step, f_main, f_mod]
    tp_stack = [f_ar, f_wrap, f_tp, f_step, f_main, f_mod]
    shared = {id(f) for f in (f_ar, f_wrap, f_step, f_main, f_mod, f_tp)}
    # Wall-clock ns, as c10::getTime(): the job ran up to a minute ago.
    t0 = args.t0_ns or time.time_ns() - (args.steps * 10 + 60_000) * 1_000_000
    for rank in range(n):
        if args.fault == "missing" and rank == args.culprit:
            continue
        my_groups = [g for g in groups if rank in g[2]]
        entries = []
        rid = 0
        seq = {g[0]: 0 for g in my_groups}
        steps = args.steps
        for step in range(steps):
            last = step == steps - 1
            for (name, desc, ranks) in my_groups:
                if args.fault == "behind" and last and rank == args.culprit:
                    continue
                seq[name] += 1
                size = 1024 if name == "0" else 256
                dtype = "Float"
                if last and rank == args.culprit and name == "0":
                    if args.fault == "mismatch":
                        size = 1000
                    elif args.fault == "dtype":
                        dtype = "BFloat16"
                t = t0 + (step * 10 + len(entries) % 3) * 1_000_000 + rank * 1000
                done = not last or args.fault == "none"
                e = {
                    "frames": normal if name == "0" else tp_stack,
                    "record_id": rid,
                    "pg_id": int(name),
                    "process_group": (name, desc),
                    "thread_name": "pt_main_thread",
                    "thread_id": "140245987654321",
                    "collective_seq_id": seq[name],
                    "p2p_seq_id": 0,
                    "op_id": seq[name],
                    "profiling_name": "nccl:all_reduce",
                    "time_created_ns": t,
                    "input_sizes": [[size]],
                    "input_dtypes": [dtype],
                    "output_sizes": [[size]],
                    "output_dtypes": [dtype],
                    "state": "completed" if done else "scheduled",
                    "time_discovered_started_ns": t + 50_000 if done else None,
                    "time_discovered_completed_ns": t + 90_000 if done else None,
                    "retired": done,
                    "timeout_ms": 600000,
                    "is_p2p": False,
                }
                rid += 1
                entries.append(e)
        entries = entries[-args.buffer:]
        pg_config = {g[0]: {"name": g[0], "desc": g[1], "ranks": "[" + ", ".join(map(str, g[2])) + "]"}
                     for g in my_groups}
        pg_status = {}
        for (name, _, _) in my_groups:
            mine = [e for e in entries if e["process_group"][0] == name]
            last_seq = mine[-1]["collective_seq_id"] if mine else 0
            completed = max([e["collective_seq_id"] for e in mine if e["state"] == "completed"] or [0])
            pg_status[name] = {"last_enqueued_collective": last_seq,
                               "last_started_collective": completed,
                               "last_completed_collective": completed}
        yield rank, (pg_config, pg_status, entries, shared)


def dump_pickle(pg_config, pg_status, entries, shared):
    d = {"version": "2.10", "pg_config": pg_config, "comm_lib_version": "2.27.5",
         "pg_status": pg_status, "entries": entries}
    p = Pickler()
    p.push(d, shared)
    return p.finish()


def dump_json(pg_config, pg_status, entries):
    es = []
    for e in entries:
        j = {k: v for k, v in e.items() if k != "frames"}
        j["process_group"] = list(e["process_group"])
        for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            j[k] = j[k] or 0
        es.append(j)
    st = {k: {a: str(b) for a, b in v.items()} for k, v in pg_status.items()}
    return json.dumps({"version": "2.10", "comm_lib_version": "2.27.5", "pg_config": pg_config,
                       "pg_status": st, "entries": es}).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--buffer", type=int, default=2000)
    ap.add_argument("--fault", default="none",
                    choices=["none", "behind", "missing", "mismatch", "dtype"])
    ap.add_argument("--culprit", type=int, default=-1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--names", default="default", choices=["default", "old", "host"])
    ap.add_argument("--bad", action="store_true")
    ap.add_argument("--t0-ns", type=int, default=0, help="time of the first entry (default: now - run)")
    args = ap.parse_args()
    if args.culprit < 0:
        args.culprit = args.ranks // 2 + 1 if args.ranks > 2 else args.ranks - 1
    os.makedirs(args.out, exist_ok=True)
    for rank, (cfg, st, entries, shared) in job(args):
        if args.names == "old":
            name = "nccl_trace_rank_%d" % rank
        elif args.names == "host":
            name = "node%02d.cluster_comm_lib_trace_rank_%d" % (rank // 8, rank)
        else:
            name = "comm_lib_trace_rank_%d" % rank
        data = dump_json(cfg, st, entries) if args.json else dump_pickle(cfg, st, entries, shared)
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
    if args.bad:
        cfg, st, entries, shared = next(job(argparse.Namespace(**{**vars(args), "fault": "none"})))[1]
        whole = dump_pickle(cfg, st, entries, shared)
        with open(os.path.join(args.out, "truncated_trace_rank_9000"), "wb") as f:
            f.write(whole[: len(whole) // 2])
        bad = bytearray(whole)
        at = whole.find(b"](", len(whole) // 3)  # an EMPTY_LIST opcode in the entries
        bad[at] = 0x63  # GLOBAL: outside the subset
        with open(os.path.join(args.out, "corrupt_trace_rank_9001"), "wb") as f:
            f.write(bytes(bad))
        p = Pickler()
        p.push({"version": "2.10", "pg_config": {}, "comm_lib_version": "2.27.5",
                "pg_status": {}, "entries": []})
        small = p.finish()
        with open(os.path.join(args.out, "small_trace_rank_9002"), "wb") as f:
            f.write(small)


if __name__ == "__main__":
    main()
