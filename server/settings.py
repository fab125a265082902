"""The server's settings: a tree of dataclasses with defaults.

They come from `initializationOptions` and from the client's `quiver`
configuration section (`workspace/configuration`, re-read on
`workspace/didChangeConfiguration`), in camelCase as VS Code writes them:

    {"diagnostics": {"debounceMs": 100, "mode": "both", "docsBaseUrl": null},
     "run": {"timeoutSeconds": null, "nproc": 1, "args": []},
     "inlayHints": {"enabled": true},
     "codeLens": {"enabled": true}}

A value of the wrong type or out of range is reported (once per problem) and
its default is used; unknown keys are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .capabilities import DIAGNOSTIC_MODES


@dataclass(frozen=True)
class DiagnosticSettings:
    debounce_ms: int = 100
    mode: str = "both"  # both | push | pull (only initializationOptions can change it)
    docs_base_url: str | None = None  # where the code links point; None: docs/diagnostics.md


MAX_NPROC = 256


@dataclass(frozen=True)
class RunSettings:
    timeout_seconds: float | None = None  # None: a run goes on until it ends or is stopped
    nproc: int = 1  # worker processes of a run (quiver run --nproc N when above 1)
    args: tuple[str, ...] = ()  # arguments of main, when the run request brings none


@dataclass(frozen=True)
class Settings:
    diagnostics: DiagnosticSettings = field(default_factory=DiagnosticSettings)
    run: RunSettings = field(default_factory=RunSettings)
    inlay_hints: bool = True
    code_lens: bool = True


def parse(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a client's JSON object, and the problems found in it."""
    settings = base or Settings()
    problems: list[str] = []
    if raw is None:
        return settings, problems
    if isinstance(raw, dict) and isinstance(raw.get("quiver"), dict):
        raw = raw["quiver"]
    if not isinstance(raw, dict):
        return settings, [f"quiver settings must be an object, found {type(raw).__name__}"]

    def section(name: str) -> dict:
        value = raw.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            problems.append(f"quiver.{name} must be an object")
            return {}
        return value

    diag = section("diagnostics")
    d = settings.diagnostics
    if "debounceMs" in diag:
        v = diag["debounceMs"]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 10_000:
            d = replace(d, debounce_ms=int(v))
        else:
            problems.append(f"quiver.diagnostics.debounceMs must be a number of milliseconds in 0..10000, found {v!r}")
    if "mode" in diag:
        v = diag["mode"]
        if v in DIAGNOSTIC_MODES:
            d = replace(d, mode=v)
        else:
            problems.append(f"quiver.diagnostics.mode must be one of {', '.join(DIAGNOSTIC_MODES)}, found {v!r}")
    if "docsBaseUrl" in diag:
        v = diag["docsBaseUrl"]
        if v is None or (isinstance(v, str) and v):
            d = replace(d, docs_base_url=v)
        else:
            problems.append(f"quiver.diagnostics.docsBaseUrl must be a URL, found {v!r}")

    run = section("run")
    r = settings.run
    if "timeoutSeconds" in run:
        v = run["timeoutSeconds"]
        if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0):
            r = replace(r, timeout_seconds=None)  # no timeout
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf"):
            r = replace(r, timeout_seconds=float(v))
        else:
            problems.append(
                f"quiver.run.timeoutSeconds must be a number of seconds (0 or null: no timeout), found {v!r}"
            )
    if "nproc" in run:
        v = run["nproc"]
        whole = isinstance(v, int) or (isinstance(v, float) and v.is_integer())
        if whole and not isinstance(v, bool) and 1 <= v <= MAX_NPROC:
            r = replace(r, nproc=int(v))
        else:
            problems.append(f"quiver.run.nproc must be a whole number of processes in 1..{MAX_NPROC}, found {v!r}")
    if "args" in run:
        v = run["args"]
        if v is None:
            r = replace(r, args=())
        elif isinstance(v, list) and all(isinstance(a, str) for a in v):
            r = replace(r, args=tuple(v))
        else:
            problems.append(f"quiver.run.args must be a list of strings, found {v!r}")

    inlay = settings.inlay_hints
    v = section("inlayHints").get("enabled", inlay)
    if isinstance(v, bool):
        inlay = v
    else:
        problems.append(f"quiver.inlayHints.enabled must be true or false, found {v!r}")
    lens = settings.code_lens
    v = section("codeLens").get("enabled", lens)
    if isinstance(v, bool):
        lens = v
    else:
        problems.append(f"quiver.codeLens.enabled must be true or false, found {v!r}")

    return Settings(d, r, inlay, lens), problems
