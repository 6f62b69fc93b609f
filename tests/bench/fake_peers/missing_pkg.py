"""A fake peer whose framework is not installed."""
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "quit":
        sys.exit(0)
    print(json.dumps({"ok": True, "framework": "missing_pkg", "available": False,
                      "reason": "pip package missing_pkg not installed"}), flush=True)
