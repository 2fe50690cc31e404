"""The shells around the rule library, a room per role.

- `admission`: the AdmissionReview wire format (reading a review, judging it through the
  admission chain, the answer), for the server and `jobguard review`.
- `server`: `jobguard serve` (the ASGI app, the request path, uvicorn in the write path, TLS and
  configuration reload, metrics and logs).
- `cli`: the command line (`check`, `review`, `rules`, `config`, `certs`).
- `cluster`: what talks to a cluster (the kubernetes client, `audit`, PolicyReports, `export vap`
  and the cluster options of `serve`).
- Used by several: `config` (the configuration file), `certs` (certificates), `exits` (exit
  codes).
"""
