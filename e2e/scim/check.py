#!/usr/bin/env python3
"""Runs scim2-tester's check_server against a SCIM 2.0 server and judges it.

Every check's result is printed (status, name, reason), then the totals. A
failure passes only when expected-failures.json lists the check with the
reason it does not apply to lattice; a listed check that no longer fails is
stale and fails the run too, so the list never outlives its reasons.

    python e2e/scim/check.py --url http://127.0.0.1:8080/scim/v2 --token "$SCIM_TOKEN"

Exit status: 0 when every failure is expected and no entry is stale, 1 when
not, 2 when the arguments or the expected-failures file are unusable.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HTTP_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}
# SKIPPED is the tester's own word for a check that does not apply (PATCH
# announced unsupported, no attribute to try); the rest of its statuses
# say the server conforms.
PASSING = {"SUCCESS", "COMPLIANT", "ACCEPTABLE"}
NOT_RUN = {"SKIPPED"}


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str
    title: str
    resource_type: str | None
    reason: str
    tags: list[str]


def check_name(result: Any) -> str:
    """A name stable across runs: `[ResourceType.]check[discriminator]`.

    The discriminator tells apart the results one check gives: the attribute
    path of a PATCH check, the HTTP method of an endpoint-methods check.
    """
    name = f"{result.resource_type}.{result.title}" if result.resource_type else str(result.title)
    data = result.data
    if isinstance(data, dict) and isinstance(data.get("urn"), str):
        return f"{name}[{data['urn']}]"
    first = (result.reason or "").split(" ", 1)[0]
    if str(result.title).endswith("_endpoint_methods") and first in HTTP_METHODS:
        return f"{name}[{first}]"
    return name


def one_line(text: str | None, limit: int = 240) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Unusable(Exception):
    """The arguments or the expected-failures file cannot be used (exit 2)."""


def load_expected(path: Path) -> dict[str, str]:
    """The expected failures: a JSON list of {"check": name, "why": reason}."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Unusable(f"cannot read {path}: {exc}") from exc
    if not isinstance(entries, list):
        raise Unusable(f"{path} must hold a JSON list")
    expected: dict[str, str] = {}
    for i, entry in enumerate(entries):
        check = entry.get("check") if isinstance(entry, dict) else None
        why = entry.get("why") if isinstance(entry, dict) else None
        if not isinstance(check, str) or not check or not isinstance(why, str) or not why.strip():
            raise Unusable(f"{path}[{i}] needs a non-empty \"check\" and a \"why\"")
        if check in expected:
            raise Unusable(f"{path}[{i}] lists {check} twice")
        expected[check] = why
    return expected


def run_checks(url: str, token: str, timeout: float) -> list[Outcome]:
    # Imported here so that --help works before the requirements are installed.
    from httpx2 import Client
    from scim2_client.engines.httpx2 import SyncSCIMClient
    from scim2_tester import check_server

    with Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http:
        results = check_server(SyncSCIMClient(http), raise_exceptions=False)
    return [
        Outcome(
            name=check_name(r),
            status=r.status.name,
            title=str(r.title),
            resource_type=r.resource_type,
            reason=one_line(r.reason),
            tags=sorted(r.tags or []),
        )
        for r in results
    ]


def judge(outcomes: list[Outcome], expected: dict[str, str]) -> tuple[list[Outcome], list[Outcome], list[str]]:
    """Unexpected failures, expected ones, and stale entries (listed, not failing)."""
    failed = [o for o in outcomes if o.status not in PASSING | NOT_RUN]
    unexpected = [o for o in failed if o.name not in expected]
    tolerated = [o for o in failed if o.name in expected]
    failing_names = {o.name for o in failed}
    stale = [name for name in expected if name not in failing_names]
    return unexpected, tolerated, stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the SCIM base URL, e.g. http://127.0.0.1:8080/scim/v2")
    parser.add_argument("--token", required=True, help="a bearer token the server accepts (a tenant's SCIM token)")
    parser.add_argument("--expected", type=Path, default=HERE / "expected-failures.json", help="the expected failures (default: beside this script)")
    parser.add_argument("--json", type=Path, help="also write every result to this file, as JSON")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one request may take (default 30)")
    args = parser.parse_args()

    try:
        expected = load_expected(args.expected)
    except Unusable as exc:
        print(f"check.py: {exc}", file=sys.stderr)
        return 2
    outcomes = run_checks(args.url, args.token, args.timeout)
    unexpected, tolerated, stale = judge(outcomes, expected)

    for o in outcomes:
        mark = "expected" if o in tolerated else o.status
        print(f"{mark:<9} {o.name}: {o.reason}")
    for name in dict.fromkeys(o.name for o in tolerated):
        print(f"\nexpected failure {name}: {expected[name]}")
    for o in unexpected:
        print(f"\nFAILED {o.name} ({o.status}): {o.reason}")
    for name in stale:
        print(f"\nSTALE {name} is listed in {args.expected} but did not fail: remove it (it said: {expected[name]})")

    counts = Counter(o.status for o in outcomes)
    print("\n" + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())) + f"; {len(outcomes)} results")
    if args.json:
        payload = {
            "url": args.url,
            "results": [o.__dict__ | {"expected": o in tolerated} for o in outcomes],
            "unexpected": [o.name for o in unexpected],
            "stale": stale,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    passed = sum(counts[s] for s in PASSING)
    skipped = sum(counts[s] for s in NOT_RUN) + len(tolerated)
    # The plain closing line test runners' summaries are read by.
    print(f"scim2-tester: {passed} passed, {len(unexpected) + len(stale)} failed, {skipped} skipped")
    return 1 if unexpected or stale else 0


if __name__ == "__main__":
    sys.exit(main())
