#!/usr/bin/env python3
"""A crowd of hostile clients on a dock socket, and the owner's round trips through it.

Starts `docksim --socket` (or uses --socket PATH of a running server), opens the session as
its owner, then runs CLIENTS-1 hostile peers for SECONDS: flooders that send junk and read,
flooders that send junk and never read, clients that send valid requests (refused: the session
is taken), half lines that never end, slow readers, and silent connections. Each hostile peer
reconnects when it is closed. The owner sends getBattery requests with ids, one at a time, and
the round trip of each is measured.

Prints one line of numbers:
  owner round trips: N, p50 X ms, p99 Y ms, max Z ms, unanswered U; peers connected C times

Usage: tools/socket-crowd.py [--docksim .build/debug/docksim] [--clients 100] [--seconds 60]
Exit status 1 if any owner request went unanswered for 5 s.
"""
import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

HELLO = b'{"type":"hello","protocols":["org.docktrack.dock/1"]}\n'


def connect(path, deadline=10.0):
    end = time.monotonic() + deadline
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


class Crowd:
    def __init__(self, path, until):
        self.path = path
        self.until = until
        self.connections = 0
        self.lock = threading.Lock()

    def peer(self, kind, seed):
        rng = random.Random(seed)
        while time.monotonic() < self.until:
            try:
                s = connect(self.path, deadline=2)
            except OSError:
                time.sleep(0.1)
                continue
            with self.lock:
                self.connections += 1
            s.settimeout(0.5)
            try:
                self.run(kind, s, rng)
            except OSError:
                pass
            finally:
                s.close()

    @staticmethod
    def still_open(s, size):
        """Reads up to `size` bytes (waiting at most the socket's timeout): False at the end."""
        try:
            return bool(s.recv(size))
        except socket.timeout:
            return True

    def run(self, kind, s, rng):
        end = self.until
        if kind == "junk-reader":
            while time.monotonic() < end:
                s.sendall(b"junk " * rng.randint(1, 40) + b"\n")
                if not self.still_open(s, 65536):
                    return
        elif kind == "junk-deaf":
            s.setblocking(False)
            while time.monotonic() < end:
                try:
                    s.send(b"x" * rng.randint(1, 200) + b"\n")
                except BlockingIOError:
                    time.sleep(0.01)
        elif kind == "requester":
            while time.monotonic() < end:
                s.sendall(b'{"command":"getBattery","id":1}\n' + HELLO)
                if not self.still_open(s, 65536):
                    return
        elif kind == "half-line":
            while time.monotonic() < end:
                s.sendall(b"{" * 4096)
                time.sleep(0.001)
        elif kind == "slow-reader":
            s.sendall(b"junk\n" * 4)
            while time.monotonic() < end:
                if not self.still_open(s, 1):
                    return
                time.sleep(1)
        elif kind == "silent":
            while time.monotonic() < end:
                if not self.still_open(s, 1):
                    return


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docksim", default=".build/debug/docksim")
    parser.add_argument("--socket", help="a running server's socket (docksim is not started)")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()

    server = None
    path = args.socket
    if path is None:
        path = os.path.join(tempfile.mkdtemp(), "dock.sock")
        server = subprocess.Popen([args.docksim, "--socket", path, "--duration", str(args.seconds + 30)],
                                  stderr=subprocess.DEVNULL)
    try:
        owner = connect(path)
        owner.settimeout(5)
        buffer = b""

        def read_until(marker):
            nonlocal buffer
            while True:
                for line in buffer.split(b"\n")[:-1]:
                    if marker in line:
                        buffer = buffer[buffer.index(line) + len(line) + 1:]
                        return line
                buffer = buffer[buffer.rfind(b"\n") + 1:] if b"\n" in buffer else buffer
                chunk = owner.recv(65536)
                if not chunk:
                    raise OSError("the server closed the owner's connection")
                buffer += chunk

        owner.sendall(HELLO)
        read_until(b'"type":"hello"')
        until = time.monotonic() + args.seconds
        crowd = Crowd(path, until)
        kinds = ["junk-reader", "junk-deaf", "requester", "half-line", "slow-reader", "silent"]
        threads = [threading.Thread(target=crowd.peer, args=(kinds[i % len(kinds)], i), daemon=True)
                   for i in range(args.clients - 1)]
        for t in threads:
            t.start()
        trips = []
        unanswered = 0
        n = 0
        while time.monotonic() < until:
            n += 1
            sent = time.monotonic()
            owner.sendall(b'{"command":"getBattery","id":%d}\n' % n)
            try:
                read_until(b'"id":%d,' % n)
                trips.append((time.monotonic() - sent) * 1000)
            except socket.timeout:
                unanswered += 1
            time.sleep(0.01)
        for t in threads:
            t.join(timeout=3)
        print("owner round trips: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms, unanswered %d; peers connected %d times"
              % (len(trips), percentile(trips, 0.5), percentile(trips, 0.99), max(trips or [float("nan")]),
                 unanswered, crowd.connections))
        return 1 if unanswered else 0
    finally:
        if server is not None:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
