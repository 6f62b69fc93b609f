"""A fake peer that answers every command with text that is not JSON."""
import sys

for line in sys.stdin:
    print("this is not json", flush=True)
