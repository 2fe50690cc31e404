"""The commands that meet a cluster or stand in for the webhook: `jobguard audit`, `jobguard
export vap`, and the cluster options of `jobguard serve` (background audit, kubernetesVersion:
auto). `app.cli` registers them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import orjson
import yaml

from jobguard.app.cluster.paging import DEFAULT_PAGE_SIZE, PAGE_BYTES
from jobguard.app.config import ConfigError, FileConfig, load_config
from jobguard.app.exits import ExitCode
from jobguard.validators import SUPPORTED_VERSIONS

OUTPUTS = ("text", "json", "junit", "sarif", "policyreport", "openreports")
REPORT_APIS = ("wgpolicyk8s", "openreports")
"""`--report-api`: wgpolicyk8s.io/v1alpha2 PolicyReports or openreports.io/v1alpha1 Reports (kept
here, not imported from `cluster.client`: that would load the kubernetes client)."""


def _config(path: str | None) -> FileConfig | None:
    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return None


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: in-cluster, $KUBECONFIG, ~/.kube/config)"
    )
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")


def cmd_audit(args: argparse.Namespace) -> int:
    from jobguard.app.cluster.audit import AuditOptions, audit, write_reports
    from jobguard.app.cluster.client import REPORT_APIS as APIS
    from jobguard.app.cluster.client import ClusterError, connect, detect_version
    from jobguard.app.cluster.policy_reports import FORMATS, policy_reports, policyreport

    config = _config(args.config)
    if config is None:
        return ExitCode.UNUSABLE
    if args.page_size < 1:
        print("jobguard: --page-size must be at least 1", file=sys.stderr)
        return ExitCode.UNUSABLE
    # --output openreports prints (and --write-reports writes) OpenReports Reports.
    api = "openreports" if args.output == "openreports" else args.report_api
    try:
        cluster = connect(args.kubeconfig, args.context)
        try:
            version = detect_version(cluster) if config.version_is_auto else None
            report = audit(
                cluster, config.to_settings(version), AuditOptions(args.namespace, args.page_size)
            )
            if args.write_reports:
                written = write_reports(
                    cluster,
                    policy_reports(report, args.report_scope, api=api),
                    APIS[api],
                    args.namespace,
                )
                print(
                    f"jobguard: {APIS[api].kind}s written: {written.created} created, "
                    f"{written.updated} updated, {written.deleted} deleted (stale)",
                    file=sys.stderr,
                )
        finally:
            cluster.close()
    except ClusterError as exc:
        print(f"jobguard: could not audit: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    if args.output in ("policyreport", "openreports"):
        sys.stdout.write(policyreport(report, args.report_scope, api))
    else:
        sys.stdout.write(FORMATS[args.output](report))
    return report.exit_code


CommandFactory = Callable[[Any, str, str], argparse.ArgumentParser]
"""`jobguard.app.cli.main._command`: a subcommand with the CLI's help format and exit codes."""


def add_audit_parser(sub: Any, command: CommandFactory) -> None:
    audit = command(
        sub, "audit", "judge the Jobs and CronJobs stored in a cluster (what holds at rest)"
    )
    add_cluster_options(audit)
    audit.add_argument("--namespace", "-n", help="one namespace (default: all)")
    audit.add_argument("--config", help="configuration file (default: $JOBGUARD_CONFIG)")
    audit.add_argument(
        "--page-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        help="objects per list request at most (pages are bounded by bytes too: "
        f"{PAGE_BYTES // 2**20} MiB of JSON)",
    )
    audit.add_argument("--output", choices=OUTPUTS, default="text", help="report format")
    audit.add_argument(
        "--report-scope",
        choices=["namespace", "object"],
        default="namespace",
        help="one report per namespace or per object (owned by the object)",
    )
    audit.add_argument(
        "--report-api",
        choices=REPORT_APIS,
        default="wgpolicyk8s",
        help="reports as wgpolicyk8s.io PolicyReports or openreports.io Reports "
        "(--output openreports implies openreports)",
    )
    audit.add_argument(
        "--write-reports",
        action="store_true",
        help="write the reports to the cluster (needs their CRD), replacing those of the last "
        "pass: reports jobguard wrote for namespaces or objects now gone are deleted",
    )
    audit.set_defaults(func=cmd_audit)


def cmd_export_vap(args: argparse.Namespace) -> int:
    from jobguard.validators import export_vap

    config = _config(args.config)
    if config is None:
        return ExitCode.UNUSABLE
    version = args.kubernetes_version
    if config.version_is_auto and version is None:
        print(
            "jobguard: kubernetesVersion: auto: export does not connect to a cluster; "
            "give --kubernetes-version",
            file=sys.stderr,
        )
        return ExitCode.UNUSABLE
    if version is not None:
        config = config.model_copy(update={"kubernetes_version": version})
    export = export_vap(config.to_settings())
    if args.output == "json":
        body = {"apiVersion": "v1", "kind": "List", "items": export.objects}
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(yaml.safe_dump_all(export.objects, sort_keys=False))
    print(
        f"jobguard: {len(export.objects) // 2} ValidatingAdmissionPolicies (and bindings) for "
        f"Kubernetes {export.version}",
        file=sys.stderr,
    )
    for entry in export.exported:
        print(
            f"exported: {entry.subject} ({entry.reason}): {', '.join(entry.objects)}",
            file=sys.stderr,
        )
    reasons: dict[str, list[str]] = {}
    for entry in export.not_exported:
        reasons.setdefault(entry.reason, []).append(entry.subject)
    for reason, subjects in reasons.items():
        print(f"not exported: {', '.join(subjects)}: {reason}", file=sys.stderr)
    return ExitCode.OK


def add_export_parser(sub: Any, command: CommandFactory) -> None:
    export = sub.add_parser("export", help="the configuration in other forms")
    export_sub = export.add_subparsers(dest="export_command", required=True, metavar="COMMAND")
    vap = command(
        export_sub,
        "export vap",
        "ValidatingAdmissionPolicies and bindings for clusters without the webhook",
    )
    vap.add_argument("--config", help="configuration file (default: $JOBGUARD_CONFIG)")
    vap.add_argument(
        "--kubernetes-version",
        choices=SUPPORTED_VERSIONS,
        help="the target version (default: the configuration's kubernetesVersion)",
    )
    vap.add_argument(
        "--output", choices=["yaml", "json"], default="yaml", help="format of the objects"
    )
    vap.set_defaults(func=cmd_export_vap)


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    add_cluster_options(serve)
    serve.add_argument(
        "--audit-interval",
        type=float,
        default=0.0,
        help="minutes between background audits of the cluster (0: off)",
    )
    serve.add_argument(
        "--audit-page-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        help="objects per list request of the audit at most (pages are bounded by bytes too: "
        f"{PAGE_BYTES // 2**20} MiB of JSON)",
    )
    serve.add_argument(
        "--audit-write-reports",
        action="store_true",
        help="write reports after each background audit (needs their CRD), replacing those "
        "of the last pass",
    )
    serve.add_argument(
        "--audit-report-api",
        choices=REPORT_APIS,
        default="wgpolicyk8s",
        help="the reports' API: wgpolicyk8s.io PolicyReports or openreports.io Reports",
    )
    serve.add_argument(
        "--audit-report-scope",
        choices=["namespace", "object"],
        default="namespace",
        help="one report per namespace or per object",
    )


def add_registration_options(serve: argparse.ArgumentParser) -> None:
    group = serve.add_argument_group(
        "webhook registrations (jobguard keeps its own; the leader of the replicas writes them)"
    )
    group.add_argument(
        "--register-webhooks",
        metavar="NS/NAME",
        help="keep the webhook configurations for this Service (off: registered by others)",
    )
    group.add_argument("--webhook-service-port", type=int, default=443, help="the Service's port")
    group.add_argument(
        "--webhook-url",
        metavar="URL",
        help="reach jobguard at this base URL (https://host:port) instead of the Service: a "
        "control plane outside the cluster's network, such as `make cluster`'s",
    )
    group.add_argument(
        "--webhook-lease", metavar="NS/NAME", help="the Lease (default: NS/<NAME>-leader)"
    )
    group.add_argument(
        "--webhook-ca-file",
        help="PEM CA bundle for the registrations (default: ca.crt beside --tls-cert-file)",
    )
    group.add_argument(
        "--webhook-owner", metavar="CLUSTERROLE", help="owner of the objects (removed with it)"
    )
    add_webhook_options(group, "webhook-")
    certs = serve.add_argument_group(
        "certificates (jobguard keeps its own CA and serving certificate in a Secret)"
    )
    certs.add_argument(
        "--manage-certificates",
        metavar="NS/SECRET",
        help="keep the certificates in this Secret (created when absent; the leader renews "
        "them, with --register-webhooks); serves them from --certificates-dir",
    )
    certs.add_argument(
        "--certificates-dir",
        default="/tmp/jobguard-tls",
        help="where the pair is written for serving",
    )
    certs.add_argument(
        "--certificate-days", type=int, default=90, help="the serving certificate's validity"
    )
    certs.add_argument("--ca-days", type=int, default=730, help="the CA's validity")


def add_webhook_options(parser: Any, prefix: str) -> None:
    """The options of the registrations (`RegistrationOptions`), for `jobguard registrations`
    (no prefix) and `serve --register-webhooks` ("webhook-")."""
    parser.add_argument(f"--{prefix}name", default="jobguard", help="the objects' name")
    parser.add_argument(f"--{prefix}domain", default="jobguard.io", help="webhook name suffix")
    parser.add_argument(
        f"--{prefix}profile",
        choices=["policy", "full"],
        default="policy",
        help="the rules registered: the policy rules, or every rule",
    )
    parser.add_argument(
        f"--{prefix}failure-policy",
        choices=["Auto", "Fail", "Ignore"],
        default="Auto",
        help="Auto: a suspend policy's own webhook fails closed, the others open",
    )
    parser.add_argument(
        f"--{prefix}timeout-seconds", type=int, default=5, help="the webhooks' timeoutSeconds"
    )
    parser.add_argument(f"--{prefix}opt-in-label", help="guard only namespaces labelled LABEL=true")
    parser.add_argument(
        f"--{prefix}mutating-failure-policy",
        choices=["Fail", "Ignore"],
        default="Ignore",
        help="the mutating webhooks' failurePolicy",
    )
    parser.add_argument(
        f"--{prefix}no-mutating", action="store_true", help="register no mutating webhook"
    )


def webhook_options(args: argparse.Namespace, prefix: str) -> Any:
    """The `RegistrationOptions` of `add_webhook_options`' arguments."""
    from jobguard.validators.registrations import FailurePolicy, Profile, RegistrationOptions

    def value(name: str) -> Any:
        return getattr(args, (prefix + name).replace("-", "_"))

    return RegistrationOptions(
        name=value("name"),
        domain=value("domain"),
        profile=Profile(value("profile")),
        failure_policy=FailurePolicy(value("failure-policy")),
        mutating=not value("no-mutating"),
        mutating_failure_policy=FailurePolicy(value("mutating-failure-policy")),
        timeout_seconds=value("timeout-seconds"),
        opt_in_label=value("opt-in-label"),
    )


def _namespaced(value: str, option: str) -> tuple[str, str]:
    namespace, sep, name = value.partition("/")
    if not sep or not namespace or not name or "/" in name:
        raise ValueError(f"{option} {value!r} is not NAMESPACE/NAME")
    return namespace, name


def serve_registrar(
    args: argparse.Namespace, rotation: Any = None
) -> tuple[Callable[[], Any], Any] | int | None:
    """The leader's registrations loop for `serve --register-webhooks`: (connect, options), None
    when not asked, an exit code for unusable options."""
    if not args.register_webhooks:
        return None
    import os
    import socket
    from pathlib import Path

    from jobguard.app.cluster.client import Cluster, connect
    from jobguard.app.cluster.lease import LeaseConfig
    from jobguard.app.cluster.registrar import RegistrarOptions
    from jobguard.validators.registrations import ClientConfig

    try:
        namespace, name = _namespaced(args.register_webhooks, "--register-webhooks")
        lease_ns, lease_name = (
            _namespaced(args.webhook_lease, "--webhook-lease")
            if args.webhook_lease
            else (namespace, f"{name}-leader")
        )
    except ValueError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    ca_file = args.webhook_ca_file
    if ca_file is None and args.tls_cert_file:
        beside = Path(args.tls_cert_file).with_name("ca.crt")
        ca_file = str(beside) if beside.exists() else None
    identity = os.environ.get("POD_NAME") or socket.gethostname()
    try:
        client_config = (
            ClientConfig(url=args.webhook_url)
            if args.webhook_url
            else ClientConfig(
                service_namespace=namespace, service_name=name, port=args.webhook_service_port
            )
        )
    except ValueError as exc:
        print(f"jobguard: --webhook-url: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    options = RegistrarOptions(
        client=client_config,
        ca_file=ca_file,
        lease=LeaseConfig(lease_ns, lease_name, identity),
        registration=webhook_options(args, "webhook-"),
        owner_cluster_role=args.webhook_owner,
        rotation=rotation,
    )

    def factory() -> Cluster:
        return connect(args.kubeconfig, args.context)

    return factory, options


def serve_certificates(args: argparse.Namespace) -> tuple[Any, Any] | int | None:
    """For `serve --manage-certificates`: the Secret made sure of and its pair written where
    serve reads it (`args.tls_*` set); (the sync task, the rotation options), None when not
    asked, an exit code when unusable."""
    if not args.manage_certificates:
        return None
    from pathlib import Path

    from kubernetes.client.exceptions import ApiException

    from jobguard.app.cluster.certrotator import (
        CertificateStore,
        CertificateSync,
        RotationOptions,
        write_pair,
    )
    from jobguard.app.cluster.client import ClusterError, connect

    try:
        namespace, secret = _namespaced(args.manage_certificates, "--manage-certificates")
        if not args.register_webhooks:
            raise ValueError("--manage-certificates needs --register-webhooks (the leader renews)")
        service = _namespaced(args.register_webhooks, "--register-webhooks")[1]
    except ValueError as exc:
        print(f"jobguard: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    from urllib.parse import urlsplit

    url_host = urlsplit(args.webhook_url).hostname if args.webhook_url else None
    options = RotationOptions(
        namespace,
        secret,
        service,
        args.certificate_days,
        args.ca_days,
        owner_cluster_role=args.webhook_owner,
        hosts=(url_host,) if url_host else (),
    )
    directory = Path(args.certificates_dir)
    try:
        cluster = connect(args.kubeconfig, args.context)
        store = CertificateStore(cluster, options)
        write_pair(store.ensure(), directory)
    except (ClusterError, ApiException, OSError) as exc:
        print(f"jobguard: --manage-certificates: {exc}", file=sys.stderr)
        return ExitCode.UNUSABLE
    args.tls_cert_file = str(directory / "tls.crt")
    args.tls_private_key_file = str(directory / "tls.key")
    return CertificateSync(store, directory), options


def serve_cluster(args: argparse.Namespace, config: FileConfig) -> tuple[str | None, Any] | int:
    """What `serve` needs from the cluster: the version `kubernetesVersion: auto` stands for and
    the background audit's options (each None when not asked); an exit code when the cluster
    cannot be asked."""
    from jobguard.app.cluster.audit import AuditOptions, BackgroundAuditOptions
    from jobguard.app.cluster.client import Cluster, ClusterError, connect, detect_version

    def factory() -> Cluster:
        return connect(args.kubeconfig, args.context)

    if args.audit_interval > 0 and args.audit_page_size < 1:
        print("jobguard: --audit-page-size must be at least 1", file=sys.stderr)
        return ExitCode.UNUSABLE
    version = None
    if config.version_is_auto:
        try:
            cluster = factory()
            try:
                version = detect_version(cluster)
            finally:
                cluster.close()
        except ClusterError as exc:
            print(f"jobguard: kubernetesVersion: auto: {exc}", file=sys.stderr)
            return ExitCode.UNUSABLE
    background = None
    if args.audit_interval > 0:
        background = BackgroundAuditOptions(
            factory,
            args.audit_interval * 60,
            AuditOptions(None, args.audit_page_size),
            args.audit_write_reports,
            args.audit_report_api,
            args.audit_report_scope,
        )
    return version, background
