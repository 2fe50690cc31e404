# jobguard: slim runtime image, non-root, no compilers in the final stage.
FROM python:3.11-slim AS build
# The rule library is compiled with mypyc (setup.py): a C compiler in this stage only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py constraints.txt README.md ./
COPY jobguard ./jobguard
# Dependencies first, then jobguard compiled against them (mypyc reads their types, hence no
# build isolation); mypy leaves again, the compiled modules need none of it at run time.
RUN python -m venv /opt/jobguard \
 && /opt/jobguard/bin/pip install --no-cache-dir -c constraints.txt . mypy setuptools \
 && JOBGUARD_COMPILE=1 /opt/jobguard/bin/pip install --no-cache-dir --no-build-isolation \
      --no-deps --force-reinstall . \
 && /opt/jobguard/bin/pip uninstall -y mypy \
 && /opt/jobguard/bin/python -c "import jobguard, sys; sys.exit(jobguard.build() != 'mypyc')"

FROM python:3.11-slim
COPY --from=build /opt/jobguard /opt/jobguard
ENV PATH=/opt/jobguard/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["jobguard", "serve"]
CMD ["--host=0.0.0.0", "--port=8443", "--tls-cert-file=/etc/jobguard/tls/tls.crt", "--tls-private-key-file=/etc/jobguard/tls/tls.key"]
