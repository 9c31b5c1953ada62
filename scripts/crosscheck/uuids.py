"""Cross-checks idkit's UUID versions against Python's `uuid` module (the standard library).

Usage: python3 uuids.py IDKIT, where IDKIT is the built `idkit` binary. Run by
scripts/crosscheck.sh.

- Version 1: ids Python makes (`uuid.uuid1`, with a node and clock sequence of its choosing)
  are read by `idkit decode uuid-v1` with the same time, clock sequence and node.
- Versions 3 and 5: `idkit uuid-name` gives the id `uuid.uuid3` and `uuid.uuid5` give, for
  each of the four RFC namespaces, a random one, and names of random bytes as text.
- Version 6: idkit's ids, written as version 1 by `idkit convert`, are read by Python as
  version 1 with the time `idkit decode uuid-v6` gives; Python reads versions 6 and 7 and
  their variant from idkit's ids. Where the installed Python makes versions 6, 7 or 8
  (`uuid.uuid6`, `uuid7`, `uuid8`, Python 3.14), idkit reads the ids it makes.
"""

import json
import random
import subprocess
import sys
import uuid

IDKIT = sys.argv[1]
GREGORIAN_TO_UNIX_100NS = 0x01B21DD213814000
failed = 0
counts = {}


def idkit(*args):
    out = subprocess.run([IDKIT, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"idkit {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout.strip()


def check(what, ok, detail):
    global failed
    counts[what] = counts.get(what, 0) + 1
    if not ok:
        failed += 1
        print(f"MISMATCH {what}: {detail}")


def ms_of_100ns(ticks):
    return (ticks - GREGORIAN_TO_UNIX_100NS) // 10_000


# Version 1, made by Python, read by idkit.
for i in range(30):
    node = random.getrandbits(48) if i % 2 else None
    u = uuid.uuid1(node=node, clock_seq=random.getrandbits(14))
    d = json.loads(idkit("decode", "uuid-v1", str(u), "--json"))
    check("v1", d["timestamp_ms"] == ms_of_100ns(u.time), f"{u}: time {d['timestamp_ms']}")
    check("v1", d["fields"]["ticks_100ns_since_1582"] == u.time, f"{u}: ticks")
    check("v1", d["fields"]["clock_seq"] == u.clock_seq, f"{u}: clock_seq")
    check("v1", d["fields"]["node"] == f"{u.node:012x}", f"{u}: node")

# Versions 3 and 5, made by both from the same namespace and name.
namespaces = {
    "dns": uuid.NAMESPACE_DNS,
    "url": uuid.NAMESPACE_URL,
    "oid": uuid.NAMESPACE_OID,
    "x500": uuid.NAMESPACE_X500,
}
for i in range(40):
    name_ns = random.choice(list(namespaces) + ["random"])
    ns = uuid.uuid4() if name_ns == "random" else namespaces[name_ns]
    arg_ns = str(ns) if name_ns == "random" else name_ns
    name = "".join(chr(random.choice([random.randint(0x20, 0x7E), random.randint(0xA0, 0x2FF)]))
                   for _ in range(random.randint(0, 40)))
    for version, make, flags in [(3, uuid.uuid3, ["--v3"]), (5, uuid.uuid5, [])]:
        ours = idkit("uuid-name", *flags, "--", arg_ns, name)
        theirs = str(make(ns, name))
        check(f"v{version}", ours == theirs, f"{arg_ns} {name!r}: {ours} vs {theirs}")
        d = json.loads(idkit("decode", f"uuid-v{version}", theirs, "--json"))
        check(f"v{version}", d["fields"]["version"] == version, f"{theirs}: version")

# Versions 6 and 7, made by idkit, read by Python.
for version in (6, 7):
    for text in idkit("gen", f"uuid-v{version}", "-n", "30").split():
        u = uuid.UUID(text)
        check(f"v{version}", u.version == version, f"{text}: version {u.version}")
        check(f"v{version}", u.variant == uuid.RFC_4122, f"{text}: variant {u.variant}")
        if version == 6:
            as_v1 = uuid.UUID(idkit("convert", "uuid-v6", "uuid-v1", text))
            d = json.loads(idkit("decode", "uuid-v6", text, "--json"))
            check("v6", as_v1.version == 1, f"{text}: as v1 {as_v1}")
            check("v6", ms_of_100ns(as_v1.time) == d["timestamp_ms"], f"{text}: time")
            check("v6", as_v1.clock_seq == d["fields"]["clock_seq"], f"{text}: clock_seq")

# What Python 3.14 and later make.
for version in (6, 7, 8):
    make = getattr(uuid, f"uuid{version}", None)
    if make is None:
        print(f"python {sys.version.split()[0]} makes no version {version} UUIDs: not checked")
        continue
    for _ in range(30):
        u = make()
        d = json.loads(idkit("decode", f"uuid-v{version}", str(u), "--json"))
        check(f"python v{version}", d["fields"]["version"] == version, f"{u}")
        if version == 7:
            check("python v7", d["timestamp_ms"] == u.int >> 80, f"{u}: time")

print("python uuid:", ", ".join(f"{k}: {v}" for k, v in counts.items()), f"checks, {failed} failed")
sys.exit(1 if failed else 0)
