"""The `jobguard` command: serve, review, check, audit, export, rules, certs."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import ssl
import sys
from pathlib import Path

import orjson

from jobguard import __version__
from jobguard.app.admission import handle_mutate, handle_validate
from jobguard.app.config import ConfigError, FileConfig, load_config
from jobguard.validators import DEFAULT_VERSION, Settings

log = logging.getLogger("jobguard")

EXIT_ALLOWED, EXIT_DENIED, EXIT_UNUSABLE = 0, 1, 2


def _load(path: str | None) -> FileConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_UNUSABLE) from None


def _offline_settings(path: str | None) -> Settings:
    """The settings of a command that does not connect to a cluster."""
    config = _load(path)
    if config.version_is_auto:
        print(
            f"jobguard: kubernetesVersion: auto needs a cluster; judging with the semantics of "
            f"{DEFAULT_VERSION}",
            file=sys.stderr,
        )
    return config.to_settings()


def cmd_serve(args: argparse.Namespace) -> int:
    from jobguard.app.cluster_cli import serve_cluster
    from jobguard.app.main import ServerOptions, create_app
    from jobguard.app.observability import configure_logging
    from jobguard.app.server import ServeOptions, serve

    if args.header_timeout <= 0 or args.max_connections < 1:
        print("jobguard: --header-timeout and --max-connections must be positive", file=sys.stderr)
        return EXIT_UNUSABLE
    for option, package in (("http", "httptools"), ("loop", "uvloop")):
        if getattr(args, option) == package and importlib.util.find_spec(package) is None:
            print(f"jobguard: --{option} {package} needs the {package} package", file=sys.stderr)
            return EXIT_UNUSABLE
    configure_logging(args.log_level)
    config = _load(args.config)
    cluster = serve_cluster(args, config)
    if isinstance(cluster, int):
        return cluster
    cluster_version, background_audit = cluster
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        print("jobguard: --tls-cert-file and --tls-private-key-file go together", file=sys.stderr)
        return EXIT_UNUSABLE
    tls = bool(args.tls_cert_file)
    if not tls:
        log.warning("serving plain HTTP: the API server calls webhooks only over TLS")
    options = ServerOptions(
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
        log_bodies=args.log_bodies,
        health_port=args.health_port,
    )
    tls_manager = None
    if tls:
        from jobguard.app.tls import CertificateError, TLSManager

        try:
            tls_manager = TLSManager(
                args.tls_cert_file,
                args.tls_private_key_file,
                args.client_ca_file,
                args.tls_reload_interval,
            )
        except (CertificateError, OSError, ssl.SSLError) as exc:
            print(f"jobguard: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
    elif args.client_ca_file:
        print("jobguard: --client-ca-file needs TLS (--tls-cert-file)", file=sys.stderr)
        return EXIT_UNUSABLE
    app = create_app(
        config,
        args.config,
        options=options,
        tls=tls_manager,
        cluster_version=cluster_version,
        audit=background_audit,
    )
    serve_options = ServeOptions(
        host=args.host,
        port=args.port,
        header_timeout=args.header_timeout,
        idle_timeout=args.idle_timeout,
        max_connections=args.max_connections,
        shutdown_delay=args.shutdown_delay,
        grace_period=args.grace_period,
        http=args.http,
        loop=args.loop,
    )
    serve(app, serve_options, tls_manager.context if tls_manager is not None else None)
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    settings = _offline_settings(args.config)
    try:
        body = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        print(f"jobguard: {args.file}: cannot read: {exc.strerror}", file=sys.stderr)
        return EXIT_UNUSABLE
    # The server's own handlers: the review is judged exactly as the webhook would judge it.
    outcome = (handle_mutate if args.mutate else handle_validate)(body, settings)
    if outcome.review is None:
        print(f"jobguard: {args.file}: {outcome.error}", file=sys.stderr)
        return EXIT_UNUSABLE
    sys.stdout.buffer.write(orjson.dumps(outcome.review, option=orjson.OPT_INDENT_2) + b"\n")
    return EXIT_ALLOWED if outcome.review["response"]["allowed"] else EXIT_DENIED


def cmd_check(args: argparse.Namespace) -> int:
    from jobguard.app.check import DEFAULT_GROUPS, DEFAULT_USER, CheckOptions, check, index_old
    from jobguard.app.manifests import ManifestError, expand_paths
    from jobguard.app.report import FORMATS
    from jobguard.validators import Requester

    settings = _offline_settings(args.config)
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


def cmd_rules(args: argparse.Namespace) -> int:
    from jobguard.app.rules_doc import render_markdown, render_text

    sys.stdout.write(render_markdown() if args.markdown else render_text())
    return 0


def cmd_certs_generate(args: argparse.Namespace) -> int:
    from jobguard.app.certs import generate

    try:
        paths = generate(
            args.service, args.namespace, Path(args.out_dir), args.days, args.dev, args.force
        )
    except FileExistsError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    print(paths.ca_bundle)
    return 0


def cmd_certs_inspect(args: argparse.Namespace) -> int:
    from jobguard.app.certs import inspect

    try:
        info = inspect(Path(args.file))
    except (OSError, ValueError) as exc:
        print(f"jobguard: {args.file}: not a readable PEM certificate: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    days = info.days_left()
    print(f"subject:   {info.subject}")
    print(f"issuer:    {info.issuer}")
    print(f"SANs:      {', '.join(info.sans) or '(none)'}")
    print(f"not after: {info.not_after.isoformat()}")
    print(f"days left: {days:.1f}")
    if days <= 0:
        print("jobguard: the certificate has expired", file=sys.stderr)
        return 1
    if days < args.warn_days:
        print(f"jobguard: the certificate expires within {args.warn_days} days", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    from jobguard.app.cluster_cli import add_audit_parser, add_export_parser, add_serve_options

    parser = argparse.ArgumentParser(
        prog="jobguard", description="Admission webhook for batch/v1 Jobs"
    )
    parser.add_argument("--version", action="version", version=f"jobguard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve /validate")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8443)
    serve.add_argument("--tls-cert-file")
    serve.add_argument("--tls-private-key-file")
    serve.add_argument("--config")
    serve.add_argument(
        "--client-ca-file", help="require and verify client certificates signed by this CA"
    )
    serve.add_argument(
        "--health-port",
        type=int,
        default=0,
        help="also serve /healthz, /readyz and /metrics over plain HTTP on this port (probes)",
    )
    serve.add_argument(
        "--tls-reload-interval",
        type=float,
        default=10.0,
        help="seconds between checks of the certificate files",
    )
    serve.add_argument(
        "--log-level",
        default=os.environ.get("JOBGUARD_LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
    )
    serve.add_argument(
        "--log-bodies",
        action="store_true",
        help="log request bodies (may contain secrets; debugging only)",
    )
    serve.add_argument("--max-body-bytes", type=int, default=7 * 1024 * 1024)
    serve.add_argument(
        "--body-timeout",
        type=float,
        default=10.0,
        help="seconds a client may take to send a request body",
    )
    serve.add_argument(
        "--idle-timeout", type=int, default=5, help="seconds an idle keep-alive connection is kept"
    )
    serve.add_argument(
        "--http",
        choices=["auto", "h11", "httptools"],
        default="auto",
        help="HTTP/1.1 parser (auto: httptools when installed, as it is by default)",
    )
    serve.add_argument(
        "--loop",
        choices=["auto", "asyncio", "uvloop"],
        default="auto",
        help="event loop (auto: uvloop when installed, as it is by default)",
    )
    serve.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        help="seconds a connection may take to send its request headers (TLS handshake included)",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        default=1000,
        help="open connections; beyond it requests get 503, beyond twice it connections are refused",
    )
    serve.add_argument(
        "--shutdown-delay",
        type=float,
        default=5.0,
        help="seconds between SIGTERM (readiness false) and closing the listener",
    )
    serve.add_argument(
        "--grace-period",
        type=int,
        default=20,
        help="seconds in-flight requests get after the listener closes",
    )
    add_serve_options(serve)
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

    add_audit_parser(sub)
    add_export_parser(sub)

    rules = sub.add_parser(
        "rules", help="list every rule: ID, area, default enforcement, where it is checked"
    )
    rules.add_argument(
        "--markdown",
        action="store_true",
        help="print the rule reference as Markdown (docs/RULES.md) instead of one line per rule",
    )
    rules.set_defaults(func=cmd_rules)

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
    ins = certs_sub.add_parser("inspect", help="subject, SANs, issuer, expiry of a certificate")
    ins.add_argument("file")
    ins.add_argument("--warn-days", type=int, default=30)
    ins.set_defaults(func=cmd_certs_inspect)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
