"""The `jobguard` command: serve, review, check, test, audit, export, rules, config, certs."""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib.util
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

import orjson

from jobguard import __version__
from jobguard.app.cli.limits import MAX_FILE_BYTES
from jobguard.app.config import (
    CONFIG_ENV,
    ConfigError,
    FileConfig,
    config_warnings,
    digest,
    effective_config,
    load_config,
    log_fields,
    parse_config,
)
from jobguard.app.exits import ExitCode
from jobguard.validators import BOTH_STAGES, DEFAULT_VERSION, Settings, Stage
from jobguard.validators.versions import release_minor

log = logging.getLogger("jobguard")


def _load(path: str | None) -> FileConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        raise SystemExit(ExitCode.UNUSABLE) from None


def _with_version(config: FileConfig, version: str | None) -> FileConfig:
    """The configuration with `--kubernetes-version` in place of its kubernetesVersion, the
    value validated as the file's is."""
    if version is None:
        return config
    # A release as people write it (1.35.2, v1.35) names its minor version's semantics.
    version = release_minor(version) or version
    try:
        checked = parse_config(f"kubernetesVersion: {orjson.dumps(version).decode()}\n", "")
    except ConfigError as exc:
        reason = exc.problems[0].reason if exc.problems else str(exc)
        print(f"jobguard: --kubernetes-version: {reason}", file=sys.stderr)
        raise SystemExit(ExitCode.UNUSABLE) from None
    return config.model_copy(update={"kubernetes_version": checked.kubernetes_version})


def _offline_settings(path: str | None, version: str | None = None) -> Settings:
    """The settings of a command that does not connect to a cluster."""
    config = _with_version(_load(path), version)
    if config.version_is_auto:
        print(
            f"jobguard: kubernetesVersion: auto needs a cluster; judging with the semantics of "
            f"{DEFAULT_VERSION}",
            file=sys.stderr,
        )
    return config.to_settings()


def cmd_serve(args: argparse.Namespace) -> int:
    from jobguard.app.cluster.commands import serve_certificates, serve_cluster, serve_registrar
    from jobguard.app.server.app import ServerOptions, create_app
    from jobguard.app.server.heap import map_large_blocks
    from jobguard.app.server.observability import configure_logging
    from jobguard.app.server.uvicorn_server import ServeOptions, serve

    if args.header_timeout <= 0 or args.max_connections < 1:
        print("jobguard: --header-timeout and --max-connections must be positive", file=sys.stderr)
        return ExitCode.UNUSABLE
    for option, package in (("http", "httptools"), ("loop", "uvloop")):
        if getattr(args, option) == package and importlib.util.find_spec(package) is None:
            print(f"jobguard: --{option} {package} needs the {package} package", file=sys.stderr)
            return ExitCode.UNUSABLE
    configure_logging(args.log_level)
    map_large_blocks()  # large bodies' memory goes back to the system once they are answered
    config = _load(args.config)
    cluster = serve_cluster(args, config)
    if isinstance(cluster, int):
        return cluster
    cluster_version, background_audit = cluster
    certificates = serve_certificates(args)
    if isinstance(certificates, int):
        return certificates
    registrar = serve_registrar(args, certificates[1] if certificates else None)
    if isinstance(registrar, int):
        return registrar
    path = args.config or os.environ.get(CONFIG_ENV) or None
    for warning in config_warnings(config.to_settings(cluster_version)):
        log.warning("configuration %s: %s", path or "(defaults)", warning)
    log.info(
        "configuration loaded",
        extra={
            "fields": {
                "version": __version__,
                **log_fields(config.to_settings(cluster_version), path),
            }
        },
    )
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        print("jobguard: --tls-cert-file and --tls-private-key-file go together", file=sys.stderr)
        return ExitCode.UNUSABLE
    tls = bool(args.tls_cert_file)
    if not tls:
        log.warning("serving plain HTTP: the API server calls webhooks only over TLS")
    health_host = args.health_host or args.host
    health_sockets: tuple[socket.socket, ...] = ()
    if args.health_port:
        from jobguard.app.server.listener import address_text, bind_plain

        try:
            health_sockets = tuple(bind_plain(health_host, args.health_port))
        except OSError as exc:
            where = address_text(health_host, args.health_port)
            log.error("cannot listen on %s (the health port): %s", where, exc.strerror or exc)
            return ExitCode.UNAVAILABLE
    options = ServerOptions(
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
        log_bodies=args.log_bodies,
        health_port=args.health_port,
        # The health port follows --host unless told otherwise: never wider than asked.
        health_host=health_host,
        health_sockets=health_sockets,
        memory_budget=args.memory_budget_bytes,
    )
    tls_manager = None
    if tls:
        import ssl  # here, not at the top: `check` has no use for it (about 10 ms)

        from jobguard.app.server.tls import CertificateError, TLSManager

        try:
            tls_manager = TLSManager(
                args.tls_cert_file,
                args.tls_private_key_file,
                args.client_ca_file,
                args.tls_reload_interval,
            )
        except (CertificateError, OSError, ssl.SSLError) as exc:
            print(f"jobguard: {exc}", file=sys.stderr)
            return ExitCode.UNUSABLE
    elif args.client_ca_file:
        print("jobguard: --client-ca-file needs TLS (--tls-cert-file)", file=sys.stderr)
        return ExitCode.UNUSABLE
    app = create_app(
        config,
        args.config,
        options=options,
        tls=tls_manager,
        cluster_version=cluster_version,
        audit=background_audit,
        registrar=registrar,
        certificate_sync=certificates[0] if certificates else None,
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
    return ExitCode.OK


def cmd_review(args: argparse.Namespace) -> int:
    # Here, not at the top: no other command judges admission reviews (about 4 ms to load).
    from jobguard.app.admission.review import handle_mutate, handle_validate

    if args.file is None and sys.stdin.isatty():
        # Nothing piped in: say how to use it rather than wait for a review typed by hand.
        args.parser.print_usage(sys.stderr)
        print("jobguard review: give an AdmissionReview file, or - to read stdin", file=sys.stderr)
        return ExitCode.UNUSABLE
    args.file = args.file or "-"
    settings = _offline_settings(args.config, args.kubernetes_version)
    try:
        body = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        print(f"jobguard: {args.file}: cannot read: {exc.strerror}", file=sys.stderr)
        return ExitCode.UNUSABLE
    # The server's own handlers: the review is judged exactly as the webhook would judge it.
    if args.mutate and args.mutate_first:
        print("jobguard review: --mutate and --mutate-first exclude each other", file=sys.stderr)
        return ExitCode.UNUSABLE
    if args.mutate:
        outcome = handle_mutate(body, settings)
    else:
        outcome = handle_validate(
            body, settings, BOTH_STAGES if args.mutate_first else Stage.VALIDATING
        )
    if outcome.review is None:
        print(f"jobguard: {args.file}: {outcome.error}", file=sys.stderr)
        return ExitCode.UNUSABLE
    if args.mutate_first and outcome.patched:
        print("jobguard: /mutate set spec.suspend: true first", file=sys.stderr)
    sys.stdout.buffer.write(orjson.dumps(outcome.review, option=orjson.OPT_INDENT_2) + b"\n")
    return ExitCode.OK if outcome.review["response"]["allowed"] else ExitCode.FINDINGS


def cmd_check(args: argparse.Namespace) -> int:
    from jobguard.app.cli.check import (
        DEFAULT_GROUPS,
        DEFAULT_USER,
        BaseError,
        CheckOptions,
        check,
        index_base,
        index_old,
    )
    from jobguard.app.cli.check_report import FORMATS
    from jobguard.app.cli.manifests import ManifestError, collect, expand_paths, name_stdin
    from jobguard.validators import Requester

    settings = _offline_settings(args.config, args.kubernetes_version)
    name_stdin(args.stdin_filename)
    if args.max_file_bytes < 1:
        print("jobguard: --max-file-bytes must be at least 1", file=sys.stderr)
        return ExitCode.UNUSABLE
    try:
        old = index_old(expand_paths(args.old or []), args.max_file_bytes)
    except ManifestError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    inputs = collect(args.paths, args.exclude or [])
    base = {}
    if args.base is not None:
        try:
            base = index_base(args.base, inputs.files)
        except BaseError as exc:
            print(f"jobguard: --base {args.base}: {exc}", file=sys.stderr)
            return ExitCode.UNUSABLE
    # A batch run: what is loaded by now lives to the end, so the cyclic collector need not
    # scan it again and again (about 3% of a large run). Its automatic passes stay off to the
    # end: `check_file` collects each file's cycles, and building the output would otherwise
    # rescan every result kept (about 7% of a large run).
    # Both are undone on return, for callers that go on in the same process.
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    # The interpreter's last act is a full collection over every object left (about 5% of a
    # run's start-up in instructions); for a process that ends there is nothing it need find.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:
        requester = Requester(args.user or DEFAULT_USER, tuple(args.group or DEFAULT_GROUPS))
        options = CheckOptions(
            settings, requester, args.subresource or "", old, base, args.max_file_bytes
        )
        report = check(inputs, options, args.jobs)
        report.fail_on = "warn" if args.fail_on == "warning" else "deny"
        report.quiet = args.quiet
        for error in report.errors:
            print(f"jobguard: {error}", file=sys.stderr)
        sys.stdout.write(FORMATS[args.output](report))
        return report.exit_code
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def cmd_test(args: argparse.Namespace) -> int:
    from jobguard.app.cli.suite import FORMATS, SuiteError, SuiteReport, run_suites

    report = SuiteReport()
    try:
        run_suites(
            args.suites,
            args.config,
            report,
            lambda config: _with_version(config, args.kubernetes_version),
        )
    except SuiteError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    sys.stdout.write(FORMATS[args.output](report))
    return ExitCode.FINDINGS if report.failed else ExitCode.OK


def _jobs(value: str) -> int:
    """--jobs: a count of at least 1, or auto (0, see check.auto_jobs)."""
    if value == "auto":
        return 0
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: a number of at least 1, or auto")
    return jobs


def cmd_rules(args: argparse.Namespace) -> int:
    from jobguard.app.cli.rules_doc import render_markdown, render_text

    sys.stdout.write(render_markdown() if args.markdown else render_text())
    return ExitCode.OK


def cmd_config_validate(args: argparse.Namespace) -> int:
    invalid = 0
    for path in args.files:
        try:
            settings = load_config(path).to_settings()
        except ConfigError as exc:
            print(exc, file=sys.stderr)
            invalid += 1
            continue
        for warning in config_warnings(settings):
            print(f"{path}: warning: {warning}", file=sys.stderr)
        print(f"{path}: valid ({digest(settings)})")
    return ExitCode.UNUSABLE if invalid else ExitCode.OK


def cmd_config_show(args: argparse.Namespace) -> int:
    import yaml

    settings = _offline_settings(args.config)
    source = args.config or os.environ.get(CONFIG_ENV) or "the defaults (no file)"
    effective = effective_config(settings)
    if args.output == "json":
        sys.stdout.write(orjson.dumps(effective, option=orjson.OPT_INDENT_2).decode() + "\n")
        return ExitCode.OK
    print(f"# jobguard {__version__}: the effective configuration of {source}")
    print(f"# digest {digest(settings)} (logged by serve at start and on every reload)")
    sys.stdout.write(yaml.safe_dump(effective, sort_keys=False, width=100, default_flow_style=None))
    return ExitCode.OK


def cmd_certs_generate(args: argparse.Namespace) -> int:
    from jobguard.app.certs import generate

    try:
        paths = generate(
            args.service, args.namespace, Path(args.out_dir), args.days, args.dev, args.force
        )
    except FileExistsError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    print(paths.ca_bundle)
    return ExitCode.OK


def cmd_certs_inspect(args: argparse.Namespace) -> int:
    from jobguard.app.certs import inspect

    try:
        info = inspect(Path(args.file))
    except (OSError, ValueError) as exc:
        print(f"jobguard: {args.file}: not a readable PEM certificate: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    days = info.days_left()
    print(f"subject:   {info.subject}")
    print(f"issuer:    {info.issuer}")
    print(f"SANs:      {', '.join(info.sans) or '(none)'}")
    print(f"not after: {info.not_after.isoformat()}")
    print(f"days left: {days:.1f}")
    if days <= 0:
        print("jobguard: the certificate has expired", file=sys.stderr)
        return ExitCode.FINDINGS
    if days < args.warn_days:
        print(f"jobguard: the certificate expires within {args.warn_days} days", file=sys.stderr)
        return ExitCode.FINDINGS
    return ExitCode.OK


def cmd_registrations(args: argparse.Namespace) -> int:
    import yaml

    from jobguard.app.cluster.commands import webhook_options
    from jobguard.validators.registrations import ClientConfig, webhook_configurations

    settings = _offline_settings(args.config)
    try:
        if args.service:
            namespace, sep, name = args.service.partition("/")
            if not sep or not namespace or not name or "/" in name:
                raise ValueError(f"--service {args.service!r} is not NAMESPACE/NAME")
            client = ClientConfig(service_namespace=namespace, service_name=name, port=args.port)
        else:
            client = ClientConfig(url=args.url)
    except ValueError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    ca_bundle = None
    if args.ca_bundle:
        try:
            with open(args.ca_bundle, "rb") as file:
                ca_bundle = file.read(1024 * 1024)
        except OSError as exc:
            print(f"jobguard: --ca-bundle {args.ca_bundle}: {exc.strerror}", file=sys.stderr)
            return ExitCode.UNUSABLE
        if b"-----BEGIN CERTIFICATE-----" not in ca_bundle:
            print(f"jobguard: --ca-bundle {args.ca_bundle}: no PEM certificate", file=sys.stderr)
            return ExitCode.UNUSABLE
    options = webhook_options(args, "")
    objects = webhook_configurations(settings, client, ca_bundle, options)
    if args.output == "json":
        sys.stdout.write(orjson.dumps(objects, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(yaml.safe_dump_all(objects, sort_keys=False))
    return ExitCode.OK


def _add_registrations_parser(sub: Any) -> None:
    from jobguard.app.cluster.commands import add_webhook_options

    reg = _command(
        sub,
        "registrations",
        "print the ValidatingWebhookConfiguration and MutatingWebhookConfiguration that send "
        "jobguard exactly what the configuration judges",
    )
    reg.add_argument("--config", help=f"configuration file, else ${CONFIG_ENV}, else the defaults")
    where = reg.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="jobguard's base URL (https://host:port), outside a cluster")
    where.add_argument("--service", metavar="NS/NAME", help="jobguard's Service")
    reg.add_argument("--port", type=int, default=443, help="the Service's port")
    reg.add_argument("--ca-bundle", metavar="FILE", help="PEM CA the API server trusts jobguard by")
    add_webhook_options(reg, "")
    reg.add_argument("--output", choices=["yaml", "json"], default="yaml", help="format")
    reg.set_defaults(func=cmd_registrations)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's default after its help (flags that are off say nothing); epilogs (exit
    codes) kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = action.default not in (None, False, argparse.SUPPRESS)
        if shown and "%(default)" not in text and (action.option_strings or action.nargs == "?"):
            text += " (default: %(default)s)"
        return text


EXIT_CODES = {
    "serve": "exit codes: 0 stopped (SIGTERM, Ctrl-C), 2 unusable configuration, certificate or "
    "arguments, 3 an address to listen on is in use or cannot be bound (the address is logged)",
    "review": "exit codes: 0 allowed, 1 denied, 2 unusable input or configuration",
    "check": "exit codes: 1 at least one deny-level violation (or warn-level with --fail-on "
    "warning), whatever else happened; else 2 usage error, unreadable or refused input, unknown "
    "--base revision; else 0",
    "test": "exit codes: 0 every case passed, 1 a case failed, 2 unusable suite or configuration",
    "rules": "exit codes: 0",
    "audit": "exit codes: 0 clean, 1 violations, 2 could not audit (the missing permission named)",
    "export vap": "exit codes: 0 written, 2 unusable configuration or version",
    "registrations": "exit codes: 0 written, 2 unusable configuration, arguments or CA bundle",
    "config validate": "exit codes: 0 every file valid, 2 any invalid (every problem on stderr)",
    "config show": "exit codes: 0, 2 unusable configuration",
    "certs generate": "exit codes: 0 written, 2 files exist (use --force)",
    "certs inspect": "exit codes: 0 valid, 1 expired or expiring within --warn-days, 2 unreadable",
}


def _command(sub: Any, name: str, help_text: str) -> Any:
    parser = sub.add_parser(
        name.split()[-1],
        help=help_text,
        description=help_text,
        epilog=EXIT_CODES[name],
        formatter_class=_HelpFormatter,
    )
    parser.set_defaults(parser=parser)
    return parser


def _version_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubernetes-version",
        metavar="VERSION",
        help="judge with this Kubernetes version's semantics: 1.35, or a release such as 1.35.2 "
        "or v1.35 (overrides the configuration's kubernetesVersion)",
    )


def build_parser() -> argparse.ArgumentParser:
    from jobguard.app.cluster.commands import (
        add_audit_parser,
        add_export_parser,
        add_registration_options,
        add_serve_options,
    )

    parser = argparse.ArgumentParser(
        prog="jobguard",
        description="Admission webhook and offline checks for Kubernetes batch/v1 Jobs",
        epilog="exit codes (see each command's --help): 0 success or allowed, 1 denied or a "
        "deny-level violation, 2 unusable input, configuration or arguments, 3 (serve) an address "
        "to listen on in use",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"jobguard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = _command(sub, "serve", "serve /validate and /mutate (the admission webhook)")
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on")
    serve.add_argument("--port", type=int, default=8443, help="port to listen on")
    serve.add_argument("--tls-cert-file", help="serving certificate (PEM); plain HTTP without")
    serve.add_argument("--tls-private-key-file", help="its private key (PEM)")
    serve.add_argument(
        "--config", help=f"configuration file (YAML), else ${CONFIG_ENV}, else the defaults"
    )
    serve.add_argument(
        "--client-ca-file", help="require and verify client certificates signed by this CA"
    )
    serve.add_argument(
        "--health-port",
        type=int,
        default=0,
        help="serve /healthz, /readyz and /metrics over plain HTTP on this port (0: off; "
        "with a health port, /metrics is served there only)",
    )
    serve.add_argument(
        "--health-host",
        help="address the health port listens on (default: the --host address)",
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
        help="log level ($JOBGUARD_LOG_LEVEL)",
    )
    serve.add_argument(
        "--log-bodies",
        action="store_true",
        help="log request bodies (may contain secrets; debugging only)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=int,
        default=7 * 1024 * 1024,
        help="larger request bodies get 413 without being read",
    )
    serve.add_argument(
        "--memory-budget-bytes",
        type=int,
        default=96 * 1024 * 1024,
        help="memory the request bodies being read and judged may cost at once, decoded "
        "(28 bytes a body byte); beyond it a request waits at most 3 s, then gets 503",
    )
    serve.add_argument(
        "--body-timeout",
        type=float,
        default=10.0,
        help="seconds a client may take to send a request body (408 after)",
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
    add_registration_options(serve)
    serve.set_defaults(func=cmd_serve)

    rev = _command(sub, "review", "judge one AdmissionReview JSON as /validate (or /mutate) does")
    rev.add_argument(
        "file",
        nargs="?",
        help="the AdmissionReview file, or - for stdin (default: stdin when piped)",
    )
    rev.add_argument("--config", help=f"configuration file, else ${CONFIG_ENV}, else the defaults")
    rev.add_argument("--mutate", action="store_true", help="answer as the mutating webhook")
    rev.add_argument(
        "--mutate-first",
        action="store_true",
        help="apply the mutating webhook's patch first, then answer as /validate (what the API "
        "server does with a request both webhooks see)",
    )
    _version_option(rev)
    rev.set_defaults(func=cmd_review)

    chk = _command(sub, "check", "judge Job/CronJob manifests offline")
    chk.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or - for stdin")
    chk.add_argument(
        "--old",
        action="append",
        metavar="PATH",
        help="the stored versions: paired documents are judged as UPDATEs (repeatable)",
    )
    chk.add_argument(
        "--base",
        metavar="REV",
        help="judge files changed since git revision REV as UPDATEs of their version there "
        "(same path, apiVersion, kind, namespace and name)",
    )
    chk.add_argument("--config", help=f"configuration file, else ${CONFIG_ENV}, else the defaults")
    chk.add_argument(
        "--max-file-bytes",
        type=int,
        default=MAX_FILE_BYTES,
        metavar="BYTES",
        help="larger input files are refused unread (exit 2), as are FIFOs, devices and sockets "
        f"(default: {MAX_FILE_BYTES})",
    )
    _version_option(chk)
    chk.add_argument(
        "--fail-on",
        choices=["deny", "warning"],
        default="deny",
        help="the lowest enforcement that makes the run fail (exit 1)",
    )
    chk.add_argument(
        "--user", help="the requester's username (suspend policies; default: jobguard-check)"
    )
    chk.add_argument(
        "--group",
        action="append",
        help="the requester's groups (repeatable; default: system:authenticated)",
    )
    chk.add_argument(
        "--subresource", choices=["status"], help="judge the pairs as UPDATEs of /status"
    )
    chk.add_argument(
        "--output",
        choices=["text", "json", "junit", "sarif", "github"],
        default="text",
        help="report format (github: GitHub Actions annotations)",
    )
    chk.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="leave skipped documents out of the text and github reports",
    )
    chk.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="the file name reports give standard input (-), e.g. the chart that was rendered",
    )
    chk.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N|auto",
        help="processes the files are shared out to; auto: one per MiB of input, at most the "
        "CPUs this process may use (its affinity and cgroup CPU quota)",
    )
    chk.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="leave out files whose path, or a directory on it, matches (repeatable)",
    )
    chk.set_defaults(func=cmd_check)

    tst = _command(
        sub,
        "test",
        "run suites of requests with their expected verdicts against a configuration",
    )
    tst.add_argument("suites", nargs="+", metavar="SUITE", help="suite file (YAML)")
    tst.add_argument(
        "--config", help="configuration file (default: the suite's config, else the defaults)"
    )
    _version_option(tst)
    tst.add_argument("--output", choices=["text", "junit"], default="text", help="report format")
    tst.set_defaults(func=cmd_test)

    add_audit_parser(sub, _command)
    add_export_parser(sub, _command)
    _add_registrations_parser(sub)

    rules = _command(
        sub, "rules", "list every rule: ID, area, default enforcement, where it is checked"
    )
    rules.add_argument(
        "--markdown",
        action="store_true",
        help="print the rule reference as Markdown (docs/RULES.md) instead of one line per rule",
    )
    rules.set_defaults(func=cmd_rules)

    config = sub.add_parser(
        "config", help="validate a configuration file, or show the effective configuration"
    )
    config_sub = config.add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    validate = _command(
        config_sub, "config validate", "check configuration files; print every problem at once"
    )
    validate.add_argument("files", nargs="+", metavar="FILE", help="configuration file (YAML)")
    validate.set_defaults(func=cmd_config_validate)
    show = _command(
        config_sub,
        "config show",
        "print the effective configuration: each rule's enablement, enforcement and parameters",
    )
    show.add_argument("--config", help=f"configuration file, else ${CONFIG_ENV}, else the defaults")
    show.add_argument("--output", choices=["yaml", "json"], default="yaml", help="format")
    show.set_defaults(func=cmd_config_show)

    certs = sub.add_parser("certs", help="generate or inspect serving certificates")
    certs_sub = certs.add_subparsers(dest="certs_command", required=True, metavar="COMMAND")
    gen = _command(certs_sub, "certs generate", "a CA and a serving certificate for the Service")
    gen.add_argument("--service", required=True, help="the webhook's Service name")
    gen.add_argument("--namespace", required=True, help="the Service's namespace")
    gen.add_argument("--out-dir", default=".", help="where ca.crt, tls.crt and tls.key go")
    gen.add_argument("--days", type=int, default=365, help="validity in days")
    gen.add_argument("--dev", action="store_true", help="also localhost and 127.0.0.1")
    gen.add_argument("--force", action="store_true", help="overwrite existing files")
    gen.set_defaults(func=cmd_certs_generate)
    ins = _command(certs_sub, "certs inspect", "subject, SANs, issuer, expiry of a certificate")
    ins.add_argument("file", help="a PEM certificate")
    ins.add_argument(
        "--warn-days", type=int, default=30, help="exit 1 when it expires within this many days"
    )
    ins.set_defaults(func=cmd_certs_inspect)
    return parser


INTERRUPTED = 130
"""Ctrl-C outside `serve`'s own handling (128 + SIGINT, as shells report it)."""


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:  # Ctrl-C: the command stops, without a traceback
        print("jobguard: interrupted", file=sys.stderr)
        return INTERRUPTED
    return result


if __name__ == "__main__":
    raise SystemExit(main())
