"""A fake peer that never answers."""
import sys
import time

print("hanging forever", file=sys.stderr, flush=True)
while True:
    time.sleep(60)
