"""S3 (and S3-compatible servers) through DuckDB's httpfs extension: the settings from the
standard AWS variables, made a DuckDB secret; listing and fetching objects.

One client for both users of object storage: a lake whose data path is `s3://...`
(store/lake.py) and a raw root on `s3://...` (ingest/mirror.py). The extension loads from
its PyPI wheel (duckdb-extension-httpfs, pinned in pyproject.toml), never downloaded.

Credentials never leave the secret: the settings' repr hides them, and every error message
passes through `scrubbed`, which blanks any credential value it contains.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import duckdb

from store.extensions import NO_DOWNLOADS, MissingExtension, extension_file

HTTPFS = ("duckdb_extension_httpfs", "httpfs")  # (package, file stem)
SECRET_NAME = "sizing_s3"
ENDPOINT_ENVS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")  # the S3-specific one wins
REGION_ENVS = ("AWS_REGION", "AWS_DEFAULT_REGION")
FETCH_BATCH_BYTES = 256 << 20  # objects fetched in one statement (DuckDB reads them at once)
FETCH_BATCH_OBJECTS = 512


class S3Error(ValueError):
    """Object storage cannot be reached or read as set (said in one line, no credential)."""


@dataclass(frozen=True)
class S3Settings:
    """What the AWS variables say; None where a variable is unset."""

    key_id: str | None = None
    secret: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    endpoint: str | None = None  # host[:port], without scheme
    use_ssl: bool = True
    url_style: str | None = None  # "path" for an S3-compatible server, AWS's own otherwise

    @classmethod
    def from_environment(cls, env: dict[str, str] | None = None) -> S3Settings:
        env = dict(os.environ if env is None else env)

        def first(*names: str) -> str | None:
            return next((env[n].strip() for n in names if env.get(n, "").strip()), None)

        endpoint, use_ssl, url_style = first(*ENDPOINT_ENVS), True, None
        if endpoint is not None:
            parts = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
            try:
                port = parts.port
            except ValueError:
                port = -1
            if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
                raise S3Error(f"{ENDPOINT_ENVS[1]}: not an http(s) URL (e.g. "
                              "http://127.0.0.1:9000)")
            # S3-compatible servers (MinIO, Ceph, moto) name the bucket in the path
            endpoint = parts.hostname + (f":{port}" if port else "")
            use_ssl, url_style = parts.scheme == "https", "path"
        return cls(first("AWS_ACCESS_KEY_ID"), first("AWS_SECRET_ACCESS_KEY"),
                   first("AWS_SESSION_TOKEN"), first(*REGION_ENVS), endpoint, use_ssl,
                   url_style)

    @property
    def given(self) -> bool:
        """Some variable is set: a secret is made of them (else DuckDB's own persistent
        secrets, if any, apply; without one, anonymous access)."""
        return any((self.key_id, self.secret, self.session_token, self.region,
                    self.endpoint))

    def credentials(self) -> list[str]:
        return [v for v in (self.key_id, self.secret, self.session_token) if v]


def is_s3(path: str | None) -> bool:
    return bool(path) and str(path).lower().startswith("s3://")


def split(uri: str) -> tuple[str, str]:
    """s3://bucket/a/b -> ("bucket", "a/b/"); the prefix ends with '/' (or is empty)."""
    bucket, _, prefix = uri[len("s3://"):].partition("/")
    prefix = prefix.strip("/")
    if not bucket or any(c in uri for c in "*?[]{}"):
        raise S3Error(f"{uri}: an s3:// URI names a bucket and an optional prefix, "
                      "without wildcards: s3://bucket/prefix")
    return bucket, prefix + "/" if prefix else ""


def create_secret(con: duckdb.DuckDBPyConnection, settings: S3Settings | None = None) -> None:
    """When the AWS variables say anything, a temporary secret made of them, for every
    s3:// path of the connection (httpfs loaded first). It lives as long as the connection
    and is never written anywhere; without one, DuckDB's own persistent secrets apply."""
    settings = S3Settings.from_environment() if settings is None else settings
    if not settings.given:
        return
    options = ["TYPE s3"]
    for name, value in (("KEY_ID", settings.key_id), ("SECRET", settings.secret),
                        ("SESSION_TOKEN", settings.session_token),
                        ("REGION", settings.region), ("ENDPOINT", settings.endpoint),
                        ("URL_STYLE", settings.url_style)):
        if value is not None:
            options.append(f"{name} '{_literal(value)}'")
    options.append(f"USE_SSL {'true' if settings.use_ssl else 'false'}")
    try:  # CREATE SECRET takes no parameters: the values are literals of the statement
        con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {SECRET_NAME} ({', '.join(options)})")
    except duckdb.Error as exc:
        raise S3Error("the S3 settings of the AWS variables were refused: "
                      + scrubbed(str(exc), settings)) from None


def connect(settings: S3Settings | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that reads S3 (nothing downloaded: autoinstall and autoload
    off), with few retries: an endpoint that is not there fails in seconds."""
    con = duckdb.connect(config=dict[str, Any](NO_DOWNLOADS))
    try:
        con.execute(f"LOAD '{_literal(str(extension_file(*HTTPFS)))}'")
        create_secret(con, settings)
        con.execute("SET http_retries = 1")
        # the listing's sizes serve the reads after it: no HEAD request per object fetched
        con.execute("SET enable_http_metadata_cache = true")
    except MissingExtension as exc:
        con.close()
        raise S3Error(str(exc)) from None
    except BaseException:
        con.close()
        raise
    return con


@dataclass(frozen=True, slots=True)
class S3Object:
    key: str  # the whole key, e.g. "prefix/site-00/run.json"
    size_bytes: int
    modified_ns: int  # last-modified, ns since the epoch (S3 keeps whole seconds)


def list_objects(con: duckdb.DuckDBPyConnection, uri: str,
                 settings: S3Settings | None = None) -> list[S3Object]:
    """Every object under the URI's prefix: one listing (ListObjectsV2 pages), no object
    read (only their size and last-modified are projected)."""
    bucket, prefix = split(uri)
    pattern = f"s3://{bucket}/{prefix}**"
    try:
        rows = con.execute("SELECT filename, size, last_modified FROM read_blob(?)",
                           [pattern]).fetchall()
    except duckdb.Error as exc:
        raise S3Error(f"cannot list {uri}: {_reason(exc, settings)}") from None
    start = len(f"s3://{bucket}/")
    return [S3Object(name[start:], int(size), _ns(modified)) for name, size, modified in rows]


def fetch(con: duckdb.DuckDBPyConnection, bucket: str, objects: list[S3Object],
          settings: S3Settings | None = None) -> Iterator[tuple[S3Object, bytes]]:
    """Each object's bytes, fetched a batch at a time (DuckDB reads a batch's objects on
    all its threads)."""
    for batch in _batches(objects):
        by_name = {f"s3://{bucket}/{o.key}": o for o in batch}
        try:
            rows = con.execute("SELECT filename, content FROM read_blob(?)",
                               [list(by_name)]).fetchall()
        except duckdb.Error as exc:
            raise S3Error(f"cannot read s3://{bucket}/{batch[0].key} and the objects after "
                          f"it: {_reason(exc, settings)}") from None
        for name, content in rows:
            yield by_name[name], bytes(content)


def _batches(objects: list[S3Object]) -> Iterator[list[S3Object]]:
    batch: list[S3Object] = []
    size = 0
    for o in objects:
        if batch and (size + o.size_bytes > FETCH_BATCH_BYTES
                      or len(batch) >= FETCH_BATCH_OBJECTS):
            yield batch
            batch, size = [], 0
        batch.append(o)
        size += o.size_bytes
    if batch:
        yield batch


def _ns(modified: dt.datetime) -> int:
    if modified.tzinfo is None:  # DuckDB gives UTC
        modified = modified.replace(tzinfo=dt.UTC)
    return int(modified.timestamp()) * 1_000_000_000 + modified.microsecond * 1000


def _reason(exc: duckdb.Error, settings: S3Settings | None) -> str:
    """DuckDB's error in one line, what it most likely means first, credentials blanked."""
    text = " ".join(str(exc).split("\nLINE ")[0].split())  # not the statement it quotes
    lowered = text.lower()
    if "404" in text or "nosuchbucket" in lowered:
        hint = "no such bucket or prefix"
    elif "403" in text or "accessdenied" in lowered or "signature" in lowered:
        hint = "access denied (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"
    elif "could not establish connection" in lowered or "connect" in lowered \
            or "resolve" in lowered or "timeout" in lowered or "timed out" in lowered:
        hint = "the endpoint cannot be reached (check AWS_ENDPOINT_URL and the network)"
    else:
        hint = "the server refused the request"
    return f"{hint} ({scrubbed(text, settings)[:300]})"


def scrubbed(text: str, settings: S3Settings | None = None) -> str:
    """`text` with every credential of the settings (and any X-Amz signature) blanked."""
    settings = S3Settings.from_environment() if settings is None else settings
    for value in sorted(settings.credentials(), key=len, reverse=True):
        text = text.replace(value, "***")
    return re.sub(r"(?i)(signature=|credential=|x-amz-security-token=)[^&\s]+", r"\1***",
                  text)


def _literal(text: str) -> str:
    return text.replace("'", "''")
