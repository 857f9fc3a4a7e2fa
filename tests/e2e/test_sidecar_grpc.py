"""gRPC hygiene and security of the real server process on 127.0.0.1: keepalive pings every
second are accepted (no GOAWAY too_many_pings), TLS and mTLS with certificates generated here,
and --no-reflection."""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
import time
from pathlib import Path
from typing import Callable

import grpc
import pytest
from conftest import ServerProcess, server_command
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from ome.selector.v1 import cache_pb2
from ome_selector_client import SelectorClient, SelectorError

Start = Callable[..., ServerProcess]
SERVING = health_pb2.HealthCheckResponse.SERVING


# --- keepalive ---------------------------------------------------------------------------------


def test_one_second_keepalive_pings_get_no_goaway(running_server: Start) -> None:
    """A client pinging every second, also with no call in flight, keeps its one connection:
    with gRPC's default server policy (5 minutes, no pings without calls) the same client gets
    GOAWAY ENHANCE_YOUR_CALM too_many_pings after three pings and its channel drops to IDLE."""
    server = running_server()
    states: list[str] = []
    options = [
        ("grpc.keepalive_time_ms", 1000),
        ("grpc.keepalive_timeout_ms", 5000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),  # keep pinging while idle
    ]
    with grpc.insecure_channel(server.address, options=options) as channel:
        channel.subscribe(lambda state: states.append(state.name), try_to_connect=True)
        stub = health_pb2_grpc.HealthStub(channel)
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=10).status == SERVING
        time.sleep(4)  # four pings on an idle connection (the default policy GOAWAYs at the third)
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=10).status == SERVING
    # Connectivity callbacks may coalesce IDLE -> CONNECTING -> READY, but a GOAWAY always
    # shows as READY -> IDLE (then READY again on the second call).
    assert "READY" in states and states[states.index("READY") :] == ["READY"], states


# --- TLS / mTLS ----------------------------------------------------------------------------------


class Pki:
    """A CA, a server certificate for 127.0.0.1 / localhost and a client certificate, as PEM files."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca_cert = self._certificate("ome-selector test CA", self.ca_key, self.ca_key.public_key(), None, ca=True)
        self.ca = self._write("ca.pem", self.ca_cert.public_bytes(serialization.Encoding.PEM))
        self.server_cert, self.server_key = self._leaf("server", server=True)
        self.client_cert, self.client_key = self._leaf("client", server=False)
        stranger_key = ec.generate_private_key(ec.SECP256R1())
        stranger = self._certificate(
            "stranger", stranger_key, stranger_key.public_key(), None, ca=False, usage=ExtendedKeyUsageOID.CLIENT_AUTH
        )
        self.stranger_cert = self._write("stranger.pem", stranger.public_bytes(serialization.Encoding.PEM))
        self.stranger_key = self._write("stranger-key.pem", _key_pem(stranger_key))

    def _certificate(
        self,
        name: str,
        signer: ec.EllipticCurvePrivateKey,
        public: ec.EllipticCurvePublicKey,
        issuer: x509.Certificate | None,
        *,
        ca: bool,
        usage: x509.ObjectIdentifier | None = None,
    ) -> x509.Certificate:
        now = datetime.datetime.now(datetime.timezone.utc)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer.subject if issuer is not None else subject)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if usage is not None:
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if usage == ExtendedKeyUsageOID.SERVER_AUTH:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
        return builder.sign(signer, hashes.SHA256())

    def _leaf(self, name: str, *, server: bool) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        cert = self._certificate(
            f"ome-selector {name}", self.ca_key, key.public_key(), self.ca_cert, ca=False, usage=usage
        )
        return self._write(f"{name}.pem", cert.public_bytes(serialization.Encoding.PEM)), self._write(
            f"{name}-key.pem", _key_pem(key)
        )

    def _write(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.write_bytes(data)
        return path

    def credentials(self, cert: Path | None = None, key: Path | None = None) -> grpc.ChannelCredentials:
        """Channel credentials trusting the CA, with a client certificate when given."""
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca.read_bytes(),
            private_key=key.read_bytes() if key else None,
            certificate_chain=cert.read_bytes() if cert else None,
        )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


def check(channel: grpc.Channel) -> int:
    return int(health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10).status)


def check_fails(channel: grpc.Channel) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as excinfo:
        check(channel)
    return excinfo.value.code()  # type: ignore[no-any-return, attr-defined]


def test_tls(running_server: Start, pki: Pki) -> None:
    server = running_server(extra_args=["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)])
    assert any(line.endswith(f" INFO ome_selector.server: TLS on {server.address}") for line in server.lines)
    with grpc.secure_channel(server.address, pki.credentials()) as channel:
        assert check(channel) == SERVING
    with SelectorClient(server.address, credentials=pki.credentials()) as client:  # the client's own TLS channel
        assert client.get_cache_status().synced
    with grpc.insecure_channel(server.address) as plaintext:
        assert check_fails(plaintext) == grpc.StatusCode.UNAVAILABLE


def test_mtls_requires_a_client_certificate_from_the_ca(running_server: Start, pki: Pki) -> None:
    server = running_server(
        extra_args=[
            "--tls-cert",
            str(pki.server_cert),
            "--tls-key",
            str(pki.server_key),
            "--tls-client-ca",
            str(pki.ca),
        ]
    )
    assert any(
        line.endswith(f" INFO ome_selector.server: TLS on {server.address} with client certificates required (mTLS)")
        for line in server.lines
    )
    with grpc.secure_channel(server.address, pki.credentials(pki.client_cert, pki.client_key)) as channel:
        assert check(channel) == SERVING
    with SelectorClient(
        server.address, credentials=pki.credentials(pki.client_cert, pki.client_key), retries=0
    ) as client:
        assert client.health() == "SERVING"
    with SelectorClient(server.address, credentials=pki.credentials(), retries=0) as anonymous_client:
        with pytest.raises(SelectorError) as refused:
            anonymous_client.health()
        assert refused.value.code == grpc.StatusCode.UNAVAILABLE
    with grpc.secure_channel(server.address, pki.credentials()) as anonymous:
        assert check_fails(anonymous) == grpc.StatusCode.UNAVAILABLE
    with grpc.secure_channel(server.address, pki.credentials(pki.stranger_cert, pki.stranger_key)) as stranger:
        assert check_fails(stranger) == grpc.StatusCode.UNAVAILABLE


def test_unusable_tls_settings_exit_1(pki: Pki, tmp_path: Path) -> None:
    process = subprocess.run(
        server_command(extra_args=["--tls-key", str(pki.server_key)]), capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 1
    assert process.stderr.splitlines()[-1].endswith(
        " ERROR ome_selector.server: tls: --tls-cert and --tls-key go together"
    )
    missing = tmp_path / "missing.pem"
    process = subprocess.run(
        server_command(extra_args=["--tls-cert", str(missing), "--tls-key", str(pki.server_key)]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 1
    assert process.stderr.splitlines()[-1].endswith(
        f" ERROR ome_selector.server: cannot read TLS files: [Errno 2] No such file or directory: '{missing}'"
    )


# --- reflection ---------------------------------------------------------------------------------


def test_no_reflection(running_server: Start) -> None:
    server = running_server(extra_args=["--no-reflection"])
    with grpc.insecure_channel(server.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        with pytest.raises(grpc.RpcError) as excinfo:
            list(
                stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
            )
        assert excinfo.value.code() == grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]
    with SelectorClient(server.address) as client:
        assert client.health() == "SERVING"
        assert client.health("no.such.Service") == "SERVICE_UNKNOWN"


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


# --- certificate rotation ------------------------------------------------------------------------


def _mount_secret(secret: Path, version: str, pki: Pki) -> None:
    """Write ``pki``'s server certificate, key and CA as Kubernetes mounts a Secret: the files in
    ``..<version>/``, ``..data`` pointing at it (swapped atomically with a rename), and
    ``tls.crt`` / ``tls.key`` / ``ca.crt`` pointing into ``..data``."""
    folder = secret / f"..{version}"
    folder.mkdir()
    for name, source in (("tls.crt", pki.server_cert), ("tls.key", pki.server_key), ("ca.crt", pki.ca)):
        (folder / name).write_bytes(source.read_bytes())
    (secret / "..data_tmp").symlink_to(folder.name)
    (secret / "..data_tmp").rename(secret / "..data")
    for name in ("tls.crt", "tls.key", "ca.crt"):
        if not (secret / name).is_symlink():
            (secret / name).symlink_to(f"..data/{name}")


def test_rotated_certificates_are_served_without_a_restart(
    running_server: Start, pki: Pki, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rotated = Pki(tmp_path_factory.mktemp("pki-rotated"))  # a new CA, server and client certificate
    secret = tmp_path_factory.mktemp("secret")
    _mount_secret(secret, "2026_01_01_00_00_00.1", pki)
    server = running_server(
        extra_args=[
            "--tls-cert",
            str(secret / "tls.crt"),
            "--tls-key",
            str(secret / "tls.key"),
            "--tls-client-ca",
            str(secret / "ca.crt"),
        ]
    )
    with grpc.secure_channel(server.address, pki.credentials(pki.client_cert, pki.client_key)) as channel:
        assert check(channel) == SERVING

    _mount_secret(secret, "2026_01_02_00_00_00.2", rotated)  # what the kubelet does when the Secret changes
    with grpc.secure_channel(server.address, rotated.credentials(rotated.client_cert, rotated.client_key)) as channel:
        assert check(channel) == SERVING  # the new CA trusts the new server certificate
    with grpc.secure_channel(server.address, pki.credentials(pki.client_cert, pki.client_key)) as old:
        assert check_fails(old) == grpc.StatusCode.UNAVAILABLE  # the old CA no longer verifies the server
    with grpc.secure_channel(server.address, rotated.credentials(pki.client_cert, pki.client_key)) as old_client:
        assert check_fails(old_client) == grpc.StatusCode.UNAVAILABLE  # the new client CA refuses old clients
    server.wait_for_line("reloaded", timeout=10)  # the log line can reach stderr after the handshake
    assert [line.split(" INFO ", 1)[1] for line in server.lines if "reloaded" in line] == [
        f"ome_selector.server: TLS certificate reloaded from {secret / 'tls.crt'}"
    ]


# --- the cache listener takes the API's credentials --------------------------------------------


def _base_model(name: str) -> list[cache_pb2.CacheObject]:
    obj = cache_pb2.CacheObject()
    obj.cluster_base_model.metadata.name = name
    obj.cluster_base_model.spec.model_format.name = "safetensors"
    return [obj]


def test_a_tcp_cache_listener_without_tls_is_refused_at_start() -> None:
    process = subprocess.run(
        server_command(extra_args=["--cache-listen", "127.0.0.1:0"]), capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 1
    assert process.stderr.splitlines()[-1].endswith(
        " ERROR ome_selector.server: cannot listen on 127.0.0.1:0: a TCP --cache-listen carries cache writes and "
        "needs the TLS of --listen (--tls-cert, --tls-key, and --tls-client-ca for mTLS); or use a unix socket"
    )


def test_a_tcp_cache_listener_requires_the_client_certificates_of_listen(running_server: Start, pki: Pki) -> None:
    server = running_server(
        extra_args=[
            *("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key), "--tls-client-ca", str(pki.ca)),
            *("--cache-listen", "127.0.0.1:0"),
        ]
    )
    cache_address = server.wait_for_line(r"CacheService on (\S+) \(only there\)").group(1)
    assert any(
        line.endswith(f" INFO ome_selector.server: TLS on {cache_address} with client certificates required (mTLS)")
        for line in server.lines
    )
    for credentials in (None, pki.credentials(), pki.credentials(pki.stranger_cert, pki.stranger_key)):
        with SelectorClient(cache_address, credentials=credentials, retries=0, timeout=10) as anonymous:
            with pytest.raises(SelectorError) as refused:
                anonymous.upsert_objects(_base_model("written-without-a-certificate"))
            assert refused.value.code == grpc.StatusCode.UNAVAILABLE
    with SelectorClient(
        cache_address, credentials=pki.credentials(pki.client_cert, pki.client_key), retries=0
    ) as controller:
        before = controller.get_cache_status()
        after = controller.upsert_objects(_base_model("written-with-a-certificate"))
    models = cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL
    counts = [{c.kind: c.count for c in status.counts}[models] for status in (before, after)]
    assert (after.generation, counts[1]) == (before.generation + 1, counts[0] + 1)
