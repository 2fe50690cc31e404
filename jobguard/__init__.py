"""jobguard: admission webhook and offline checks for Kubernetes batch/v1 Jobs.

`jobguard.validators` is the rule library (pure Python, no I/O); `jobguard.app` holds the shells,
a room per role: `admission` (the AdmissionReview wire format), `server` (`jobguard serve`: the
ASGI app `jobguard.app.server.app:app`), `cli` (the command line), `cluster` (the kubernetes
client, the audit), and what several use: `config`, `certs`, `exits`.
"""

__version__ = "0.1.0"
