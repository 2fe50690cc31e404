"""jobguard: admission webhook and offline checks for Kubernetes batch/v1 Jobs.

`jobguard.validators` is the rule library (pure Python, no I/O); `jobguard.app` holds the shells
(ASGI app `jobguard.app.main:app`, CLI, configuration, TLS, metrics).
"""

__version__ = "0.1.0"
