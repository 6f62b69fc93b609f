"""A fake peer that follows the adapter protocol with made-up latencies (it tests the protocol
client, not timing). Its "model" is Relu: `outputs` writes y = max(x, 0) of the first input."""
import json
import sys

import numpy as np

loaded = None
for line in sys.stdin:
    try:
        req = json.loads(line)
        cmd = req["cmd"]
    except (ValueError, KeyError, TypeError) as e:
        print(json.dumps({"ok": False, "error": f"malformed command: {e}"}), flush=True)
        continue
    if cmd == "hello":
        reply = {"ok": True, "framework": "fake_ok", "version": "0.0.1", "available": True}
    elif cmd == "load":
        loaded = req
        reply = {"ok": True, "load_ms": 1.5, "settings": {"threads": req["threads"], "mode": "fake"},
                 "precision_used": req["precision"], "notes": "fake peer"}
    elif cmd == "run":
        if loaded is None:
            reply = {"ok": False, "error": "run before load"}
        else:
            n = int(req["iterations"])
            reply = {"ok": True, "latencies_us": [100.0 + (i % 3) for i in range(n)], "rss_bytes": 1 << 20,
                     "peak_rss_bytes": 2 << 20}
    elif cmd == "outputs":
        name = next(iter(loaded["inputs"]))
        x = np.load(f"{req['inputs_dir']}/{name}.npy")
        np.save(f"{req['out_dir']}/y.npy", np.maximum(x, 0))
        reply = {"ok": True, "outputs": ["y"]}
    elif cmd == "quit":
        sys.exit(0)
    else:
        reply = {"ok": False, "error": f"unknown command {cmd}"}
    print(json.dumps(reply), flush=True)
