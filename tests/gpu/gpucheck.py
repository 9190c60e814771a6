"""Shared by the real-GPU checks: assertions that print and count, and a
view of this process in gpufracctl ps."""
import json
import os
import subprocess
import sys

GIB = 1 << 30
failures = 0


def check(desc, ok, detail=""):
    global failures
    print(("ok - " if ok else "not ok - ") + desc + ("" if ok else ": " + str(detail)))
    if not ok:
        failures += 1


def used_by_me():
    """This process's charge on its devices, as gpufracctl ps reports it."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    out = subprocess.run([os.environ["GPUFRACCTL"], "ps", "--json"], env=env,
                         check=True, capture_output=True, text=True).stdout
    for c in json.loads(out)["clients"]:
        if c["pid"] == os.getpid():
            return sum(d["used_bytes"] for d in c["devices"])
    return 0


def done():
    sys.exit(1 if failures else 0)
