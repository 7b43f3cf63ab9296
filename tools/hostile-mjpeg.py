#!/usr/bin/env python3
"""A hostile MJPEG camera for tests: an HTTP multipart stream of PICTURE, where after the first
ten pictures four of every five are the same JPEG with its header changed to claim 32000x32000
pixels (87 KB on the wire; libjpeg allocates 3 GB for it). Prints the port it serves on.

  hostile-mjpeg.py PICTURE.jpg [PORT]      (PORT 0 or none: any free port)
  hostile-mjpeg.py PICTURE.jpg PORT TINY.jpg
      another camera: the first connection gets ten good pictures and is closed; every later
      one starts with 25 TINY pictures (a second of a 16x16 placeholder), then good ones
"""
import socketserver
import struct
import sys
import time


def claiming(jpeg, width, height):
    """`jpeg` with its start-of-frame header saying width x height."""
    data = bytearray(jpeg)
    i = 2
    while i + 4 <= len(data):
        marker = data[i + 1]
        length = struct.unpack('>H', data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            data[i + 5:i + 9] = struct.pack('>HH', height, width)
            return bytes(data)
        i += 2 + length
    raise SystemExit('no start-of-frame header in the picture')


good = open(sys.argv[1], 'rb').read()
bomb = claiming(good, 32000, 32000)
tiny = open(sys.argv[3], 'rb').read() if len(sys.argv) > 3 else None
connections = 0


class Stream(socketserver.StreamRequestHandler):
    def handle(self):
        self.rfile.readline()
        self.wfile.write(b'HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=frame\r\n\r\n')
        global connections
        connections += 1
        first = connections == 1
        n = 0
        try:
            while True:
                if tiny is not None:
                    if first and n == 10:
                        return
                    picture = tiny if (not first and n < 25) else good
                else:
                    picture = good if (n < 10 or n % 5 == 0) else bomb
                self.wfile.write(b'--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n' % len(picture) + picture + b'\r\n')
                n += 1
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass


socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer.daemon_threads = True
server = socketserver.ThreadingTCPServer(('127.0.0.1', int(sys.argv[2]) if len(sys.argv) > 2 else 0), Stream)
print(server.server_address[1], flush=True)
server.serve_forever()
