"""The `jobguard` command: serve, review, certs."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import orjson

from app.admission import BadReview, mutate_review, parse_review, review
from app.config import ConfigError, FileConfig, load_config

log = logging.getLogger("jobguard")

EXIT_ALLOWED, EXIT_DENIED, EXIT_UNUSABLE = 0, 1, 2


def _load(path: str | None) -> FileConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_UNUSABLE) from None


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.main import create_app

    config = _load(args.config)
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        print("jobguard: --tls-cert-file and --tls-private-key-file go together", file=sys.stderr)
        return EXIT_UNUSABLE
    tls = bool(args.tls_cert_file)
    if not tls:
        log.warning("serving plain HTTP: the API server calls webhooks only over TLS")
    uvicorn.run(
        create_app(config, args.config),
        host=args.host,
        port=args.port,
        ssl_certfile=args.tls_cert_file if tls else None,
        ssl_keyfile=args.tls_private_key_file if tls else None,
        log_level="info",
    )
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    settings = _load(args.config).to_settings()
    try:
        body = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        print(f"jobguard: {args.file}: cannot read: {exc.strerror}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        parsed = parse_review(body)
    except BadReview as exc:
        print(f"jobguard: {args.file}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.mutate:
        out = mutate_review(parsed, settings)
    else:
        out, _verdict = review(parsed, settings)
    sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    return EXIT_ALLOWED if out["response"]["allowed"] else EXIT_DENIED


def cmd_check(args: argparse.Namespace) -> int:
    from app.check import DEFAULT_GROUPS, DEFAULT_USER, CheckOptions, check, index_old
    from app.manifests import ManifestError, expand_paths
    from app.report import FORMATS
    from validators import Requester

    settings = _load(args.config).to_settings()
    if args.jobs < 1:
        print("jobguard: --jobs must be at least 1", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        old = index_old(expand_paths(args.old or []))
    except ManifestError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    requester = Requester(args.user or DEFAULT_USER, tuple(args.group or DEFAULT_GROUPS))
    options = CheckOptions(settings, requester, args.subresource or "", old)
    paths = expand_paths(args.paths)
    report = check(paths, options, args.jobs)
    for error in report.errors:
        print(f"jobguard: {error}", file=sys.stderr)
    sys.stdout.write(FORMATS[args.output](report))
    return report.exit_code


def cmd_certs_generate(args: argparse.Namespace) -> int:
    from app.certs import generate

    try:
        paths = generate(
            args.service, args.namespace, Path(args.out_dir), args.days, args.dev, args.force
        )
    except FileExistsError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    print(paths.ca_bundle)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jobguard", description="Admission webhook for batch/v1 Jobs"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve /validate")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8443)
    serve.add_argument("--tls-cert-file")
    serve.add_argument("--tls-private-key-file")
    serve.add_argument("--config")
    serve.set_defaults(func=cmd_serve)

    rev = sub.add_parser("review", help="judge one AdmissionReview JSON (file or -)")
    rev.add_argument("file", nargs="?", default="-")
    rev.add_argument("--config")
    rev.add_argument("--mutate", action="store_true", help="answer as the mutating webhook")
    rev.set_defaults(func=cmd_review)

    chk = sub.add_parser("check", help="judge Job/CronJob manifests offline")
    chk.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or - for stdin")
    chk.add_argument(
        "--old",
        action="append",
        metavar="PATH",
        help="the stored versions: paired documents are judged as UPDATEs",
    )
    chk.add_argument("--config")
    chk.add_argument("--user", help="the requester's username (suspend policies)")
    chk.add_argument("--group", action="append", help="the requester's groups (repeatable)")
    chk.add_argument("--subresource", choices=["status"])
    chk.add_argument("--output", choices=["text", "json", "junit", "sarif"], default="text")
    chk.add_argument("--jobs", type=int, default=1, help="processes (files are shared out)")
    chk.set_defaults(func=cmd_check)

    certs = sub.add_parser("certs", help="certificates")
    certs_sub = certs.add_subparsers(dest="certs_command", required=True)
    gen = certs_sub.add_parser("generate", help="CA and serving certificate")
    gen.add_argument("--service", required=True)
    gen.add_argument("--namespace", required=True)
    gen.add_argument("--out-dir", default=".")
    gen.add_argument("--days", type=int, default=365)
    gen.add_argument("--dev", action="store_true", help="also localhost and 127.0.0.1")
    gen.add_argument("--force", action="store_true")
    gen.set_defaults(func=cmd_certs_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
