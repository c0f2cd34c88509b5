"""The ``prefmem`` command (DESIGN §3). Exit 0 ok, 1 bad input or failed run, 2 usage."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from toolkit._io import LIMITS_HELP, output_target
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
""" + LIMITS_HELP + "\n"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: one line, exit 2
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {s!r}") from None
    if v < 1 or len(s) > 12:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 10^12, got {s!r}")
    return v


def _seed(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {s!r}") from None
    if not 0 <= v < 2**32:
        raise argparse.ArgumentTypeError(f"expected a seed from 0 to 2^32-1, got {s!r}")
    return v


def _finite(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {s!r}")
    return v


def _positive(s: str) -> float:
    v = _finite(s)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {s!r}")
    return v


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
    g.add_argument("--concurrency", type=_positive_int, default=8, help="concurrent LLM calls (default 8)")
    g.add_argument("--timeout", type=_positive, default=120.0, help="seconds per attempt (default 120)")
    g.add_argument("--deadline", type=_positive, default=None, help="seconds for the whole run's LLM calls")
    g.add_argument("--response-format", default="json_schema",
                   choices=["json_schema", "json_object", "none"],
                   help="how the schema is sent: json_schema (OpenAI), json_object (llama.cpp)")
    g.add_argument("--prices", default=None, metavar="JSON",
                   help='price table {"model": [usd_per_1M_in, usd_per_1M_out]} for the usage ledger')
    g.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")


def _gateway(args: argparse.Namespace):
    from toolkit.llm import Gateway

    prices = None
    if getattr(args, "prices", None):
        try:
            from toolkit._io import parse_json_line, read_text

            prices = {k: tuple(v) for k, v in parse_json_line(read_text(args.prices), args.prices).items()}
        except (ValueError, TypeError, AttributeError) as exc:
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
    r.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="run up to N diagnostics side by side in worker processes (default: the "
                        "number of cores); every file written is the same whatever N")
    r.add_argument("--embedder", default=None, metavar="E",
                   help="sentence embedder for gating features, utility labels and Table 1: tfidf "
                        "(lexical baseline, the default), minilm (offline), openai/<model>, "
                        "openai-api/<service>/<model>; vectors are cached like LLM replies")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a diagnostic option, e.g. --set budgets=60,120 (repeatable)")
    r.add_argument("--agent", default=None, metavar="M",
                   help="protocol: the task-solving agent, offline (default) | openai/<m> | openai-api/<svc>/<m>")
    r.add_argument("--method", action="append", default=None, metavar="X",
                   help="protocol: memory method by name or package.module:Class (repeatable; default: all five)")
    r.add_argument("--first-contact", action="append", default=[], metavar="DIR",
                   help="score a batch written apart once and record commit, date and scores in "
                        "DIR/FIRST_CONTACT.json (fidelity: DIR/points.jsonl + DIR/profiles/; admission, "
                        "resolution: their input and gold files); refuses a second time; repeatable "
                        "(every batch's input is checked before any is scored)")
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
    m.add_argument("--folds", type=_positive_int, default=5, help="k for the Self cross-validation (default 5)")
    m.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    m.add_argument("--embedder", default="tfidf", metavar="E",
                   help="features: tfidf (the paper's protocol, default) or a sentence embedder "
                        "(minilm, openai/<model>, ...) with the same logistic regression")

    d = sub.add_parser("drift", help="PAMU preference tracking over dialogue turns")
    d.add_argument("input", help="drift input JSONL ({id, turns: [{user, assistant}]})")
    d.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    d.add_argument("--window", type=_positive_int, default=None, help="sliding window W (>= 1)")
    d.add_argument("--beta", type=_finite, default=None, help="EMA decay beta, in (0, 1)")
    d.add_argument("--fuse", type=_finite, default=None, help="fusion weight lambda on SW, in [0, 1]")
    d.add_argument("--threshold", type=_positive, default=None, help="change threshold delta (> 0)")
    _add_model_args(d)

    for verb, helptext, shape in (
        ("compile", "TellOnce D.3: rule -> programmatic / semantic / guidance / inactive", "{id, rule}"),
        ("judge", "TellOnce D.3: (rule, evidence) -> pass / violation / not_applicable / unknown",
         "{id, rule, evidence, check?}"),
        ("select", "TellOnce D.4: (task, library) -> applicable rules", "{id, task, instruction?, library}"),
    ):
        c = sub.add_parser(verb, help=helptext)
        c.add_argument("input", help=f"input JSONL ({shape})")
        c.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
        _add_model_args(c)

    v = sub.add_parser("validate", help="validate profiles (YAML) and JSONL inputs")
    v.add_argument("files", nargs="+", help="files to check")
    for verb_parser in (a, s, f, m, d, v):  # the input limits, on every file-reading verb's --help
        verb_parser.epilog = LIMITS_HELP
        verb_parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return p


# -- verbs ------------------------------------------------------------------------------
def _read(path: str, kind: type) -> list:
    from toolkit.datasets.jsonl import read_jsonl

    return read_jsonl(path, kind)


#: each first-contact diagnostic's input file in a batch folder, and the record it is read as
_FIRST_CONTACT_INPUTS = {"fidelity": ("points.jsonl", "AnnotatedPoint"),
                         "admission": ("admission.jsonl", "AdmissionInput"),
                         "resolution": ("resolution.jsonl", "ResolutionInput")}


def _check_first_contact(dirs: list[str], names: list[str]) -> None:
    """Every ``--first-contact DIR`` must hold a batch for one of the diagnostics asked for
    (UsageError otherwise), and every such input is read as its diagnostic will before any batch
    is scored: a batch is scored once, so a bad file met half way through a run would leave some
    batches scored and the rest not. All problems of all batches are raised together (InputError:
    exit 1, nothing written)."""
    from toolkit import records
    from toolkit.datasets.jsonl import read_jsonl

    found = {d: [(Path(d) / f, getattr(records, kind)) for n, (f, kind) in _FIRST_CONTACT_INPUTS.items()
                 if n in names and (Path(d) / f).is_file()] for d in dirs}
    for d, inputs in found.items():
        if not inputs:
            raise UsageError(
                f"--first-contact {d}: holds no batch for {', '.join(names)} (fidelity: "
                "points.jsonl; admission: admission.jsonl; resolution: resolution.jsonl)")
    problems: list[str] = []
    for path, kind in (x for inputs in found.values() for x in inputs):
        try:
            read_jsonl(path, kind)
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)


def cmd_validate(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import iter_json_objects, one_line, validate_objects
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
        file_problems: list[str] = []
        try:
            pairs = list(iter_json_objects(path, file_problems))
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        kind = next((guess_kind(o) for _, o in pairs if guess_kind(o)), None)
        if kind is None and pairs:
            i, obj = pairs[0]
            keys = one_line(", ".join(sorted(obj)))
            file_problems.append(f"{path}:{i} <record>: unknown record kind (keys: {keys})")
        elif kind is not None:
            validate_objects(path, pairs, RECORD_KINDS[kind], file_problems)
        problems.extend(file_problems)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"ok: {len(args.files)} file(s) valid")
    return 1 if problems else 0


def cmd_admit(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.records import AdmissionInput
    from toolkit.rules.admission import admit_records

    target = output_target(args.output)
    records = _read(args.input, AdmissionInput)
    gw = _gateway(args)
    out = admit_records(records, gw.model(args.model), seed=args.seed)
    write_jsonl(out, target)
    _ledger(gw)
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.records import ResolutionInput
    from toolkit.rules.resolution import resolve_records

    target = output_target(args.output)
    records = _read(args.input, ResolutionInput)
    gw = _gateway(args)
    out = resolve_records(records, gw.model(args.model), seed=args.seed)
    write_jsonl(out, target)
    _ledger(gw)
    return 0


def cmd_fidelity(args: argparse.Namespace) -> int:
    from toolkit.profiles import load_profiles
    from toolkit.records import AnnotatedPoint
    from toolkit.simuser.fidelity import fidelity_report, format_fidelity

    target = output_target(args.json, flag="--json") if args.json is not None else None
    points = _read(args.points, AnnotatedPoint)
    profiles = load_profiles(args.profiles)
    missing = sorted({p.annotator for p in points} - set(profiles))
    if missing:
        raise InputError(f"{args.profiles}: no profile for annotator(s) {', '.join(missing)}")
    gw = _gateway(args)
    report = fidelity_report(points, profiles, gw.model(args.model), seed=args.seed)
    if target is not None:
        target.write(json.dumps(report, indent=2) + "\n")
    if target is None or target.mode != "stdout":
        print(format_fidelity(report))
    _ledger(gw)
    return 0


def cmd_meta(args: argparse.Namespace) -> int:
    from toolkit.gating.meta import format_meta, meta_analysis
    from toolkit.records import Fact

    if args.folds < 2:
        raise UsageError("--folds must be at least 2")
    target = output_target(args.json, flag="--json") if args.json is not None else None
    facts = _read(args.facts, Fact)
    if not facts:
        raise InputError(f"{args.facts}: no fact records")
    if args.folds > len(facts):
        raise UsageError(f"--folds {args.folds}: more folds than facts ({len(facts)} in {args.facts})")
    emb = None
    if args.embedder != "tfidf":
        from toolkit.llm import get_embedder

        emb = get_embedder(args.embedder)
    report = meta_analysis(facts, folds=args.folds, seed=args.seed, embedder=emb)
    if target is not None:
        target.write(json.dumps(report, indent=2) + "\n")
    if target is None or target.mode != "stdout":
        print(format_meta(report))
    return 0


def cmd_drift(args: argparse.Namespace) -> int:
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.drift.tracker import make_config, track_records
    from toolkit.records import DriftInput

    params = {k: getattr(args, k) for k in ("window", "beta", "fuse", "threshold") if getattr(args, k) is not None}
    try:
        make_config(**params)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    target = output_target(args.output)
    records = _read(args.input, DriftInput)
    gw = _gateway(args)
    out = track_records(records, gw.model(args.model), **params)
    write_jsonl(out, target)
    _ledger(gw)
    return 0


def cmd_checks(args: argparse.Namespace) -> int:
    """``prefmem compile`` / ``judge`` / ``select`` (TellOnce D.3, D.4)."""
    from toolkit.datasets.jsonl import write_jsonl
    from toolkit.records import CompileInput, JudgeInput, SelectInput
    from toolkit.rules.checks import compile_records, judge_records, select_records

    kind, fn = {"compile": (CompileInput, compile_records), "judge": (JudgeInput, judge_records),
                "select": (SelectInput, select_records)}[args.verb]
    records = _read(args.input, kind)
    gw = _gateway(args)
    out = fn(records, gw.model(args.model))
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
    from toolkit.runs import default_data_dir

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
    if args.agent:
        gw.model(args.agent)  # fail early on a bad agent string
        options["agent"] = args.agent
    if args.method:
        from toolkit.memory import method_class

        for m in args.method:
            method_class(m)  # fail early (exit 2) on a method that does not load
        options["methods"] = list(args.method)
    if args.first_contact:
        _check_first_contact(args.first_contact, names)
        options["first_contact"] = list(args.first_contact)
    if getattr(args, "embedder", None):
        from toolkit.llm import get_embedder

        get_embedder(args.embedder, gw)  # fail early on a bad embedder string (loads nothing)
        options["embedder"] = args.embedder
    jobs = min(args.jobs or os.cpu_count() or 1, len(names))
    if jobs <= 1:
        for name in names:
            print(_reproduce_one(name, args, gw, data_dir, options))
        _ledger(gw)
        return 0
    _reproduce_parallel(names, args, data_dir, options, jobs)
    return 0


def _reproduce_one(name: str, args: argparse.Namespace, gw, data_dir: Path | None,
                   options: dict) -> str:
    """Run one diagnostic into ``args.out/name``; return its tables as text and where it wrote."""
    from toolkit import diagnostics
    from toolkit._progress import EXPECTED_S, diagnostic_bar
    from toolkit.runs import RunContext

    ctx = RunContext(out_dir=Path(args.out) / name, models=args.model or ["offline"], seed=args.seed,
                     gateway=gw, data_dir=data_dir, resume=args.resume, quick=args.quick,
                     options=options)
    last = _last_elapsed(ctx.out_dir) or (EXPECTED_S.get(name, 60.0) / 5 if args.quick else None)
    with ctx.running():  # lock, manifest "running" -> complete / interrupted / failed
        t0 = time.monotonic()
        with diagnostic_bar(name, last):  # one bar each, with an ETA
            result = diagnostics.get(name)(ctx)
        result.write(ctx.out_dir)
        elapsed = time.monotonic() - t0
        ctx.complete(extra={"result": result.meta, "elapsed_s": round(elapsed, 1)})
    return f"{result.summary()}\n[{name}] wrote {ctx.out_dir} in {elapsed:.1f}s\n"


_STOPPING = False


def _worker_stop(signum, frame) -> None:
    """SIGTERM in a worker: the running diagnostic unwinds (manifest ``interrupted``) and the
    worker starts none of the diagnostics already queued to it."""
    global _STOPPING
    _STOPPING = True
    raise Terminated()


def _worker_init(slots, running) -> None:
    """A worker process: its own progress-bar line, the pool's shared count of running
    diagnostics (:mod:`toolkit._cores`), and SIGTERM unwinds like in the parent."""
    from toolkit import _cores

    os.environ["PREFMEM_BAR_POSITION"] = str(slots.get())
    _cores.install(running)
    signal.signal(signal.SIGTERM, _worker_stop)


def _worker_run(name: str, args: argparse.Namespace, data_dir: Path | None,
                options: dict) -> tuple[str, str]:
    """One diagnostic in a worker process, with a gateway of its own (the cache is shared)."""
    from toolkit import _cores

    if _STOPPING:
        raise Terminated()
    gw = _gateway(args)
    try:
        with _cores.running():  # the others' share of the cores (the gating sweep reads it)
            text = _reproduce_one(name, args, gw, data_dir, options)
    finally:
        _stop_idle_loky_workers()
    return text, gw.ledger.summary() if gw.ledger.rows() else ""


def _stop_idle_loky_workers() -> None:
    """Stop the joblib (loky) workers a diagnostic left idle in this worker process.

    A worker process joins its children when the pool retires it, and loky keeps its workers
    for 300 s after their last task: without this, every ``--jobs`` run that used joblib (the
    gating sweep) sat idle for five minutes before exiting."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


def _reproduce_parallel(names: list[str], args: argparse.Namespace, data_dir: Path | None,
                        options: dict, jobs: int) -> None:
    """Diagnostics side by side in ``jobs`` worker processes, the longest expected first.

    Diagnostics share nothing but the response cache (SQLite, safe across processes) and each
    writes only its own folder, so the files are those of a one-by-one run; the tables are
    printed in the order asked for, each as soon as it and those before it are done.
    """
    import multiprocessing as mp
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait

    mpc = mp.get_context("spawn")
    slots = mpc.Queue()
    for i in range(jobs):
        slots.put(i)
    running = mpc.Value("i", 0)  # diagnostics running now, for toolkit._cores.free_cores
    order = _schedule(names, Path(args.out))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mpc, initializer=_worker_init,
                             initargs=(slots, running)) as pool:
        futs = {n: pool.submit(_worker_run, n, args, data_dir, options) for n in order}
        try:
            shown = 0
            pending = set(futs.values())
            while shown < len(names):
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for f in done:
                    f.result()  # raises the first failure (the others are cancelled below)
                while shown < len(names) and futs[names[shown]].done():
                    text, ledger = futs[names[shown]].result()
                    print(text)
                    if ledger:
                        print(ledger, file=sys.stderr)
                    sys.stdout.flush()
                    shown += 1
        except BaseException:
            for f in futs.values():
                f.cancel()
            # the running ones stop too (SIGTERM: each leaves its manifest "interrupted")
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.terminate()
            raise


def _schedule(names: list[str], out: Path) -> list[str]:
    """The order ``--jobs N`` starts ``names`` in: longest expected first (each diagnostic's last
    complete run under ``out``, else :data:`toolkit._progress.EXPECTED_S`, else 60 s), so that on
    2 cores the longest one (gating) starts at once and the short ones fill the ends (LPT)."""
    from toolkit._progress import EXPECTED_S

    return sorted(names, key=lambda n: -(_last_elapsed(out / n) or EXPECTED_S.get(n, 60.0)))


def _last_elapsed(out_dir: Path) -> float | None:
    """Seconds the last complete run of this diagnostic took (its manifest), for the ETA."""
    try:
        man = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    v = man.get("elapsed_s") if man.get("status") == "complete" else None
    return float(v) if isinstance(v, int | float) and v > 0 else None


def _ledger(gw) -> None:
    if gw.ledger.rows():
        print(gw.ledger.summary(), file=sys.stderr)


VERBS = {
    "reproduce": cmd_reproduce, "admit": cmd_admit, "resolve": cmd_resolve, "fidelity": cmd_fidelity,
    "meta-analysis": cmd_meta, "drift": cmd_drift, "validate": cmd_validate,
    "compile": cmd_checks, "judge": cmd_checks, "select": cmd_checks,
}


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so runs unwind (manifest ``interrupted``, locks freed)."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def _say(text: str) -> None:
    """Print to stderr with anything that looks like a credential redacted."""
    from toolkit._redact import redact

    print(redact(text), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.verb:
        parser.print_help()
        return 2
    import warnings

    from toolkit._redact import install_warning_format

    install_warning_format()
    old_term = None
    try:
        old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (e.g. called from a test harness thread)
        pass
    try:
        with warnings.catch_warnings():
            return VERBS[args.verb](args)
    except UsageError as exc:
        _say(f"prefmem {args.verb}: error: {exc}")
        return 2
    except InputError as exc:
        for line in exc.problems:
            _say(line)
        return 1
    except PrefmemError as exc:
        _say(f"prefmem {args.verb}: {exc}")
        return 1
    except KeyboardInterrupt as exc:
        what = "terminated" if isinstance(exc, Terminated) else "interrupted"
        if args.verb == "reproduce":
            _say(f"prefmem reproduce: {what}; finished items are kept (rerun with --resume)")
        else:
            _say(f"prefmem {args.verb}: {what}; nothing was written")
        return 143 if isinstance(exc, Terminated) else 130
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


if __name__ == "__main__":
    raise SystemExit(main())
