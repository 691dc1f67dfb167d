"""``python -m thunder executors``: every executor thunder found, and whether it can run here."""

from __future__ import annotations

import argparse
import sys


def list_executors(out=sys.stdout) -> int:
    from thunder.extend import get_all_executors, get_default_executors
    from thunder.plugins import plugin_failures

    defaults = {e.name for e in get_default_executors()}
    rows = []
    for ex in get_all_executors():
        ok, reason = ex.availability()
        status = "available" if ok else f"unavailable: {reason}"
        rows.append((ex.name, ex.kind, str(ex.priority), "yes" if ex.name in defaults else "no", status))
    for name, reason in plugin_failures().items():
        rows.append((name, "?", "-", "no", f"plugin failed to load: {reason}"))
    header = ("name", "kind", "priority", "default", "status")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    for r in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4], file=out)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m thunder", description="Thunder command line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("executors", help="list the executors found through plugins, with availability and priority")
    args = parser.parse_args(argv)
    if args.command == "executors":
        return list_executors()
    return 2


if __name__ == "__main__":
    sys.exit(main())
