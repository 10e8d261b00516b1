"""``ReplicaSet`` and ``ReplicaTransport``: the least-loaded healthy replica, a per-replica cap,
a failed replica taken out and its request sent again elsewhere (fake transports: the error
branches; ``tests/runner/test_replicas.py`` runs real servers)."""

from __future__ import annotations

import asyncio

import pytest

from sieval.errors import TransportError, TransportTimeout
from sieval.transport import FakeTransport, HttpRequest, json_reply
from sieval.transport.replicas import ReplicaSet, ReplicaTransport

A, B, C = "http://127.0.0.1:1001", "http://127.0.0.1:1002", "http://127.0.0.1:1003"


def request(path: str = "/v1/completions") -> HttpRequest:
    return HttpRequest(url=A + path, body=b"{}")


async def test_each_request_goes_to_the_least_loaded_replica() -> None:
    replicas = ReplicaSet([A, B, C])
    held = [await replicas.acquire(set()) for _ in range(3)]
    assert [r.base for r in held] == [A, B, C]  # each in turn while they are level
    await replicas.release(held[1], answered=True)
    assert (await replicas.acquire(set())).base == B  # the only one with none in flight
    assert [r.in_flight for r in replicas.replicas] == [1, 1, 1]


async def test_a_shard_starts_from_its_own_replica() -> None:
    replicas = ReplicaSet([A, B, C], first=2)
    assert (await replicas.acquire(set())).base == C


async def test_a_replica_cap_makes_a_request_wait_for_room() -> None:
    replicas = ReplicaSet([A, B], cap=1)
    first, second = await replicas.acquire(set()), await replicas.acquire(set())
    third = asyncio.ensure_future(replicas.acquire(set()))
    await asyncio.sleep(0)
    assert not third.done()  # both replicas are at their cap
    await replicas.release(second, answered=True)
    assert (await third).base == B and first.in_flight == 1


async def test_a_failing_replica_is_taken_out_and_the_request_sent_elsewhere() -> None:
    def handler(req: HttpRequest) -> object:
        if req.url.startswith(B):
            raise TransportError("POST http://127.0.0.1:1002/v1/completions failed: refused")
        return json_reply({"ok": req.url})

    fake = FakeTransport(handler)
    replicas = ReplicaSet([B, A, C])
    transport = ReplicaTransport(fake, replicas, A)
    reply = await transport.send(request())
    assert reply.replica == A and [c.url for c in fake.calls] == [
        B + "/v1/completions",
        A + "/v1/completions",
    ]
    assert all(c.failover for c in fake.calls)  # no outage wait on a replica
    assert replicas.replicas[0].out is not None and replicas.replicas[0].in_flight == 0
    for _ in range(4):  # never again to the replica taken out
        assert (await transport.send(request())).replica in (A, C)
    assert not [c for c in fake.calls[2:] if c.url.startswith(B)]
    assert sum(r.served for r in replicas.replicas) == 5


async def test_a_replica_answering_5xx_is_taken_out_once_another_answers() -> None:
    def handler(req: HttpRequest) -> object:
        if req.url.startswith(B):
            raise TransportError("POST .../v1/completions answered HTTP 503", status=503)
        return json_reply({})

    replicas = ReplicaSet([B, A])
    reply = await ReplicaTransport(FakeTransport(handler), replicas, A).send(request())
    assert reply.replica == A
    assert replicas.replicas[0].out is not None and "HTTP 503" in replicas.replicas[0].out


async def test_a_request_every_replica_fails_with_a_status_keeps_the_replicas() -> None:
    """A request no server takes (one a server answers 500 whatever it is) fails as itself: it
    does not take the replicas out one by one, failing the run's other samples with them."""

    def handler(req: HttpRequest) -> object:
        raise TransportError(f"POST {req.url} answered HTTP 500", status=500)

    replicas = ReplicaSet([A, B, C])
    transport = ReplicaTransport(FakeTransport(handler), replicas, A)
    with pytest.raises(TransportError) as failed:
        await transport.send(request())
    assert failed.value.status == 500 and "every replica" not in failed.value.message
    assert [r.out for r in replicas.replicas] == [None, None, None]
    assert [r.in_flight for r in replicas.replicas] == [0, 0, 0]


async def test_no_replica_left_is_a_transport_error_naming_each() -> None:
    def handler(req: HttpRequest) -> object:
        raise TransportError(f"{req.url} refuses connections")

    transport = ReplicaTransport(FakeTransport(handler), ReplicaSet([A, B]), A)
    with pytest.raises(TransportError) as failed:
        await transport.send(request())
    assert "every replica of the model failed" in failed.value.message
    assert A in failed.value.message and B in failed.value.message


async def test_a_timeout_fails_the_request_and_keeps_the_replica() -> None:
    def handler(req: HttpRequest) -> object:
        raise TransportTimeout("the read budget ran out")

    replicas = ReplicaSet([A, B])
    transport = ReplicaTransport(FakeTransport(handler), replicas, A)
    with pytest.raises(TransportTimeout):
        await transport.send(request())
    assert [r.out for r in replicas.replicas] == [None, None]


async def test_another_route_of_another_server_is_not_rerouted() -> None:
    fake = FakeTransport(lambda req: json_reply({}))
    transport = ReplicaTransport(fake, ReplicaSet([A, B]), A)
    other = HttpRequest(url="http://127.0.0.1:9/v1/models", method="GET")
    assert (await transport.send(other)).replica is None
    assert fake.calls == [other]
