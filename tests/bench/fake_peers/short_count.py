"""A fake peer whose run answers carry one latency too few."""
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    cmd = req["cmd"]
    if cmd == "hello":
        r = {"ok": True, "framework": "short_count", "version": "1", "available": True}
    elif cmd == "load":
        r = {"ok": True, "load_ms": 1.0, "settings": {}}
    elif cmd == "run":
        r = {"ok": True, "latencies_us": [5.0] * (int(req["iterations"]) - 1)}
    else:
        sys.exit(0)
    print(json.dumps(r), flush=True)
