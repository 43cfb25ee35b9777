"""Ports handed to test servers: never in the kernel's ephemeral range (an outgoing connection could take one
before the server binds it), never the same twice in a process, and a slice of their own per test worker."""
from __future__ import annotations

import socket

import pytest

from deploy import stack


def _ephemeral_low() -> int:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
        return int(ranges.read().split()[0])


def test_ports_are_below_the_ephemeral_range_and_never_repeat(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setattr(stack, "_handed_out", set())
    ports = [stack.free_port() for _ in range(200)]
    assert len(set(ports)) == 200
    assert all(1024 < port < _ephemeral_low() for port in ports)


def test_two_workers_never_draw_the_same_port(monkeypatch):
    drawn = {}
    for worker in ("gw0", "gw1", "gw2"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        monkeypatch.setattr(stack, "_handed_out", set())
        drawn[worker] = {stack.free_port() for _ in range(300)}
    assert not drawn["gw0"] & drawn["gw1"] and not drawn["gw1"] & drawn["gw2"] and not drawn["gw0"] & drawn["gw2"]


def test_a_port_something_listens_on_is_never_handed_out(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    monkeypatch.setattr(stack, "_handed_out", set())
    base = stack.free_port()
    monkeypatch.setattr(stack, "_port_slice", lambda: range(base, base + 6))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", base + 2))
        taken.listen()
        monkeypatch.setattr(stack, "_handed_out", set())
        handed = {stack.free_port() for _ in range(5)}
    assert handed == set(range(base, base + 6)) - {base + 2}


def test_a_worker_that_went_round_its_slice_starts_again(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw4")
    ports = stack._port_slice()
    monkeypatch.setattr(stack, "_handed_out", set(ports))
    assert stack.free_port() in ports


@pytest.mark.parametrize("worker", ["", "master"])
def test_outside_a_worker_the_slice_is_still_below_the_ephemeral_range(monkeypatch, worker):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    assert stack._port_slice().stop <= _ephemeral_low()
