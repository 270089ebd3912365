"""A throwaway S3 server on the loopback interface (moto's, from the dev extras) for the
object storage tests and `make bench-lake`.

It binds 127.0.0.1 on a free port, keeps its buckets in memory and is gone when `stop()`
runs. `env` gives the AWS variables a `sizing` process needs to reach it (plain http,
path-style URLs, as for any S3-compatible server).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# any values work against moto; the secret is distinctive so tests can look for it
ACCESS_KEY_ID = "sizing-test-key"
SECRET_ACCESS_KEY = "SECRETxyz-sizing-test"
REGION = "us-east-1"


class LocalS3:
    def __init__(self) -> None:
        self._server: Any = None
        self.endpoint = ""

    def start(self) -> LocalS3:
        from moto.server import ThreadedMotoServer  # the dev extras; only these need it

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    @property
    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
                "AWS_REGION": REGION, "AWS_ENDPOINT_URL": self.endpoint}

    def client(self) -> Any:
        import boto3  # with moto

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=ACCESS_KEY_ID,
                            aws_secret_access_key=SECRET_ACCESS_KEY)

    def upload(self, folder: Path, bucket: str, prefix: str) -> int:
        """Every file under `folder` as an object under `prefix`; how many. The bucket is
        created when it is not there."""
        client = self.client()
        if bucket not in {b["Name"] for b in client.list_buckets().get("Buckets", [])}:
            client.create_bucket(Bucket=bucket)
        files = [p for p in sorted(folder.rglob("*")) if p.is_file()]

        def put(path: Path) -> None:
            key = f"{prefix.strip('/')}/{path.relative_to(folder).as_posix()}".lstrip("/")
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())

        with ThreadPoolExecutor(8) as pool:  # the client is thread-safe; a request is ~ms
            list(pool.map(put, files))
        return len(files)

    def objects(self, bucket: str, prefix: str = "") -> dict[str, int]:
        """Each object's key and size in bytes."""
        found: dict[str, int] = {}
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                        Prefix=prefix)
        for page in pages:
            found.update((o["Key"], o["Size"]) for o in page.get("Contents", []))
        return found
