"""A fake peer that says hello, then dies on load with a message on stderr."""
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "hello":
        print(json.dumps({"ok": True, "framework": "crasher", "version": "1", "available": True}), flush=True)
    else:
        print("fatal: simulated crash while loading", file=sys.stderr, flush=True)
        sys.exit(3)
