"""The ``prefmem`` command (DESIGN §3). Exit 0 ok, 1 bad input or failed run, 2 usage."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from toolkit.errors import InputError, PrefmemError, UsageError

EPILOG = """\
models: offline (default; no network, deterministic) | openai/<model> (OPENAI_API_KEY,
OPENAI_BASE_URL) | openai-api/<service>/<model> (<SERVICE>_BASE_URL, <SERVICE>_API_KEY).
LLM replies are cached in $PREFMEM_CACHE_DIR (default ~/.cache/prefmem); --cache-mode
replay reruns from the cache alone and fails on a miss.
Examples:
  prefmem reproduce                         # every diagnostic, offline, into results/
  prefmem reproduce admission --model offline --model openai/gpt-4o-mini
  prefmem validate profiles/*.yaml fixtures/admission/heldout.jsonl
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: one line, exit 2
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _add_model_args(p: argparse.ArgumentParser, multi: bool = False) -> None:
    g = p.add_argument_group("model and gateway")
    if multi:
        g.add_argument("--model", action="append", metavar="M",
                       help="model string; repeat to compare several (default: offline)")
    else:
        g.add_argument("--model", default="offline", metavar="M", help="model string (default: offline)")
    g.add_argument("--cache-mode", default="use", choices=["use", "refresh", "replay", "off"],
                   help="LLM response cache: use (default), refresh, replay (no network), off")
    g.add_argument("--cache-dir", default=None, help="cache folder (default $PREFMEM_CACHE_DIR)")
    g.add_argument("--concurrency", type=int, default=8, help="concurrent LLM calls (default 8)")
    g.add_argument("--timeout", type=float, default=120.0, help="seconds per attempt (default 120)")
    g.add_argument("--deadline", type=float, default=None, help="seconds for the whole run's LLM calls")
    g.add_argument("--response-format", default="json_schema",
                   choices=["json_schema", "json_object", "none"],
                   help="how the schema is sent: json_schema (OpenAI), json_object (llama.cpp)")
    g.add_argument("--prices", default=None, metavar="JSON",
                   help='price table {"model": [usd_per_1M_in, usd_per_1M_out]} for the usage ledger')
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def _gateway(args: argparse.Namespace):
    from toolkit.llm import Gateway

    prices = None
    if getattr(args, "prices", None):
        try:
            prices = {k: tuple(v) for k, v in json.loads(Path(args.prices).read_text()).items()}
        except (OSError, ValueError, TypeError) as exc:
            raise InputError(f"{args.prices}: not a price table ({exc})") from None
    return Gateway(
        cache_dir=args.cache_dir, cache_mode=args.cache_mode, max_concurrency=args.concurrency,
        attempt_timeout=args.timeout, run_deadline=args.deadline,
        response_format=args.response_format, prices=prices, seed=args.seed,
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="prefmem", description="Reproduce and extend research on agents that learn "
                "from user corrections and preferences.", epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    from toolkit.runs import toolkit_version

    p.add_argument("--version", action="version", version=f"prefmem-toolkit {toolkit_version()}")
    sub = p.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)

    r = sub.add_parser("reproduce", help="run diagnostics; write tables, figures, manifest, report",
                       description="Run diagnostics and write DIR/NAME/ with CSV tables, PNG figures, "
                       "manifest.json and report.md; print each table with the paper's figures beside ours.")
    r.add_argument("names", nargs="*", metavar="NAME", help="diagnostics to run (default: all available)")
    r.add_argument("--out", default="results", help="output folder (default results/)")
    r.add_argument("--resume", action="store_true", help="continue an interrupted run; refuses if the configuration changed")
    r.add_argument("--quick", action="store_true", help="notebook-sized runs (about a minute each)")
    r.add_argument("--data-dir", default=None, help="third-party data (default ../shared/data or $PREFMEM_DATA_DIR)")
    r.add_argument("--list", action="store_true", help="list the diagnostics and exit")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a diagnostic option, e.g. --set budgets=60,120 (repeatable)")
    r.add_argument("--first-contact", action="append", default=[], metavar="DIR",
                   help="score a batch written apart once and record it (admission, resolution)")
    _add_model_args(r, multi=True)

    a = sub.add_parser("admit", help="correction admission and rule extraction")
    a.add_argument("input", help="admission input JSONL ({id, text, context?})")
    a.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    _add_model_args(a)

    s = sub.add_parser("resolve", help="rule-library update decisions")
    s.add_argument("input", help="resolution input JSONL ({id, correction, context?, library})")
    s.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    _add_model_args(s)

    f = sub.add_parser("fidelity", help="simulator fidelity against annotated interaction points")
    f.add_argument("points", help="annotated points JSONL")
    f.add_argument("--profiles", required=True, help="profile YAML file or folder (annotators' profiles)")
    f.add_argument("--json", default=None, help="write the JSON report here")
    _add_model_args(f)

    m = sub.add_parser("meta-analysis", help="TF-IDF Self vs leave-one-user-out AUC")
    m.add_argument("facts", help="fact records JSONL")
    m.add_argument("--json", default=None, help="write the JSON report here")
    m.add_argument("--folds", type=int, default=5, help="k for the Self cross-validation (default 5)")
    m.add_argument("--seed", type=int, default=0, help="random seed (default 0)")

    d = sub.add_parser("drift", help="PAMU preference tracking over dialogue turns")
    d.add_argument("input", help="drift input JSONL ({id, turns: [{user, assistant}]})")
    d.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    d.add_argument("--window", type=int, default=None, help="sliding window W")
    d.add_argument("--beta", type=float, default=None, help="EMA decay beta")
    d.add_argument("--fuse", type=float, default=None, help="fusion weight lambda on SW")
    d.add_argument("--threshold", type=float, default=None, help="change threshold delta")
    _add_model_args(d)

    v = sub.add_parser("validate", help="validate profiles (YAML) and JSONL inputs")
    v.add_argument("files", nargs="+", help="files to check")
    return p


# -- verbs ------------------------------------------------------------------------------
def _read(path: str, kind: type) -> list:
    from toolkit.datasets.jsonl import read_jsonl

    return read_jsonl(path, kind)


def cmd_validate(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from toolkit.datasets.jsonl import format_validation_error, iter_json_objects
    from toolkit.profiles import load_profile
    from toolkit.records import RECORD_KINDS, guess_kind

    problems: list[str] = []
    for f in args.files:
        path = Path(f)
        if path.suffix in (".yaml", ".yml"):
            try:
                load_profile(path)
            except InputError as exc:
                problems.extend(exc.problems)
            continue
        if not path.exists():
            problems.append(f"{path}: file not found")
            continue
        kind = None
        for i, obj in iter_json_objects(path, problems):
            kind = kind or guess_kind(obj)
            if kind is None:
                problems.append(f"{path}:{i} <record>: unknown record kind (keys: {', '.join(sorted(obj))})")
                break
            try:
                RECORD_KINDS[kind].model_validate(obj)
            except ValidationError as exc:
                problems.extend(format_validation_error(path, i, exc))
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"ok: {len(args.files)} file(s) valid")
    return 1 if problems else 0


def cmd_admit(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.records import AdmissionInput
    from toolkit.rules.admission import admit_records

    records = _read(args.input, AdmissionInput)
    gw = _gateway(args)
    out = admit_records(records, gw.model(args.model), seed=args.seed)
    write_jsonl(out, args.output)
    _ledger(gw)
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.records import ResolutionInput
    from toolkit.rules.resolution import resolve_records

    records = _read(args.input, ResolutionInput)
    gw = _gateway(args)
    out = resolve_records(records, gw.model(args.model), seed=args.seed)
    write_jsonl(out, args.output)
    _ledger(gw)
    return 0


def cmd_fidelity(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import atomic_write_text
    from toolkit.profiles import load_profiles
    from toolkit.records import AnnotatedPoint
    from toolkit.simuser.fidelity import fidelity_report, format_fidelity

    points = _read(args.points, AnnotatedPoint)
    profiles = load_profiles(args.profiles)
    missing = sorted({p.annotator for p in points} - set(profiles))
    if missing:
        raise InputError(f"{args.profiles}: no profile for annotator(s) {', '.join(missing)}")
    gw = _gateway(args)
    report = fidelity_report(points, profiles, gw.model(args.model), seed=args.seed)
    print(format_fidelity(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    _ledger(gw)
    return 0


def cmd_meta(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import atomic_write_text
    from toolkit.gating.meta import format_meta, meta_analysis
    from toolkit.records import Fact

    if args.folds < 2:
        raise UsageError("--folds must be at least 2")
    facts = _read(args.facts, Fact)
    report = meta_analysis(facts, folds=args.folds, seed=args.seed)
    print(format_meta(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    return 0


def cmd_drift(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.drift.tracker import track_records
    from toolkit.records import DriftInput

    records = _read(args.input, DriftInput)
    params = {k: getattr(args, k) for k in ("window", "beta", "fuse", "threshold") if getattr(args, k) is not None}
    gw = _gateway(args)
    out = track_records(records, gw.model(args.model), **params)
    write_jsonl(out, args.output)
    _ledger(gw)
    return 0


def _parse_sets(items: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep or not k:
            raise UsageError(f"--set {it!r}: expected KEY=VALUE")
        try:
            opts[k] = json.loads(v)
        except json.JSONDecodeError:
            opts[k] = [json.loads(x) if x.replace(".", "", 1).isdigit() else x for x in v.split(",")] if "," in v else v
    return opts


def cmd_reproduce(args: argparse.Namespace) -> int:
    from toolkit import diagnostics
    from toolkit.runs import RunContext, default_data_dir

    avail = diagnostics.available()
    if args.list:
        for n in avail:
            print(n)
        return 0
    names = args.names or ["all"]
    if "all" in names:
        names = [n for n in avail if n != "tour"] or avail
    unknown = [n for n in names if n not in diagnostics.REGISTRY]
    if unknown:
        raise UsageError(f"unknown diagnostic(s) {', '.join(unknown)}; available: {', '.join(avail)}")
    missing = [n for n in names if n not in avail]
    if missing:
        raise UsageError(f"diagnostic(s) {', '.join(missing)} not built yet; available: {', '.join(avail)}")
    models = args.model or ["offline"]
    gw = _gateway(args)
    for m in models:
        gw.model(m)  # fail early on a bad model string
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    options = _parse_sets(args.set)
    if getattr(args, "first_contact", None):
        options["first_contact"] = list(args.first_contact)
    failed = 0
    for name in names:
        ctx = RunContext(out_dir=Path(args.out) / name, models=models, seed=args.seed, gateway=gw,
                         data_dir=data_dir, resume=args.resume, quick=args.quick, options=options)
        ctx.prepare()
        t0 = time.monotonic()
        try:
            result = diagnostics.get(name)(ctx)
            result.write(ctx.out_dir)
        except BaseException:
            ctx.write_manifest(status="failed")
            raise
        ctx.write_manifest(status="complete", extra={"result": result.meta})
        print(result.summary())
        print(f"[{name}] wrote {ctx.out_dir} in {time.monotonic() - t0:.1f}s\n")
    _ledger(gw)
    return 1 if failed else 0


def _ledger(gw) -> None:
    if gw.ledger.rows():
        print(gw.ledger.summary(), file=sys.stderr)


VERBS = {
    "reproduce": cmd_reproduce, "admit": cmd_admit, "resolve": cmd_resolve, "fidelity": cmd_fidelity,
    "meta-analysis": cmd_meta, "drift": cmd_drift, "validate": cmd_validate,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.verb:
        parser.print_help()
        return 2
    try:
        return VERBS[args.verb](args)
    except UsageError as exc:
        print(f"prefmem {args.verb}: error: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        return 1
    except PrefmemError as exc:
        print(f"prefmem {args.verb}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"prefmem {args.verb}: interrupted; finished items are kept (rerun with --resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
