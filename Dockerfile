# jobguard: slim runtime image, non-root, nothing installed in the final stage.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY jobguard ./jobguard
# The pinned dependencies and jobguard into a venv the final stage copies whole.
RUN python -m venv /opt/jobguard \
 && /opt/jobguard/bin/pip install --no-cache-dir -c constraints.txt . \
 && /opt/jobguard/bin/jobguard --version

FROM python:3.11-slim
COPY --from=build /opt/jobguard /opt/jobguard
ENV PATH=/opt/jobguard/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 8443
# The whole CLI: `docker run IMAGE check ...` in CI; with no arguments, the webhook server.
ENTRYPOINT ["jobguard"]
CMD ["serve", "--host=0.0.0.0", "--port=8443", "--tls-cert-file=/etc/jobguard/tls/tls.crt", "--tls-private-key-file=/etc/jobguard/tls/tls.key"]
