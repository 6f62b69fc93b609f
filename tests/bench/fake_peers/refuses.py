"""A fake peer that is available but refuses every model with a reason."""
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "hello":
        print(json.dumps({"ok": True, "framework": "refuses", "version": "2", "available": True}), flush=True)
    elif req["cmd"] == "quit":
        sys.exit(0)
    else:
        print(json.dumps({"ok": False, "error": "unsupported op Relu"}), flush=True)
