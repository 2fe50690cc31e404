"""jobguard: admission webhook and offline checks for Kubernetes batch/v1 Jobs.

`jobguard.validators` is the rule library (pure Python, no I/O); `jobguard.app` holds the shells
(ASGI app `jobguard.app.main:app`, CLI, configuration, TLS, metrics).
"""

__version__ = "0.1.0"


def build() -> str:
    """ "mypyc" when the rule library runs compiled (setup.py, `JOBGUARD_COMPILE=1`), else
    "python": the same behaviour either way, at two speeds."""
    from jobguard.validators import chain

    return "python" if str(chain.__file__).endswith(".py") else "mypyc"
