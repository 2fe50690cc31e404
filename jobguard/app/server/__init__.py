"""`jobguard serve`: the ASGI app and its request path (`app`, `endpoints`), uvicorn in the
write path (`uvicorn_server`, `listener`), TLS and configuration reload (`tls`, `reload`,
`polling`), metrics and logs (`observability`)."""
