#!/usr/bin/env python3
"""net_faults.py - small servers on 127.0.0.1 for the upload fault and secrets tests.

usage: net_faults.py MODE PORTFILE [ARGS...]

Listens on a port the kernel picks, writes it to PORTFILE (written then renamed), and serves
until SIGTERM. Modes:

  proxy HOST:PORT LOGFILE   a TCP proxy to HOST:PORT that appends every byte a client sends to
                            LOGFILE (to see the exact requests rtrack made: the SigV4
                            Authorization headers with their signatures)
  tls CERT KEY LOGFILE      a TLS server with the certificate CERT (self-signed, made by the test
                            with the openssl CLI); appends one line per completed handshake and
                            per request to LOGFILE and answers every request 200 {}
  trickle LOGFILE           reads the request, then answers "HTTP/1.1 200 OK..." one byte a
                            second, forever; appends one line per connection to LOGFILE
"""
import os
import signal
import socket
import ssl
import sys
import threading
import time


def write_port(path, port):
    with open(path + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(path + ".tmp", path)


def log_line(path, text):
    with open(path, "a") as f:
        f.write(text + "\n")


def read_request(conn):
    """The request head (and a Content-Length body), or b"" when the client went away."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":", 1)[1])
    while len(rest) < n:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head


def pipe(src, dst, log):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if log:
                with open(log, "ab") as f:
                    f.write(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve_proxy(lsock, target, log):
    host, port = target.rsplit(":", 1)
    while True:
        conn, _ = lsock.accept()
        up = socket.create_connection((host, int(port)))
        threading.Thread(target=pipe, args=(conn, up, log), daemon=True).start()
        threading.Thread(target=pipe, args=(up, conn, None), daemon=True).start()


def serve_tls(lsock, cert, key, log):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    def one(conn):
        try:
            with ctx.wrap_socket(conn, server_side=True) as tls:
                log_line(log, "handshake")
                head = read_request(tls)
                if head:
                    log_line(log, "request " + head.split(b"\r\n")[0].decode("latin-1"))
                    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        except (OSError, ssl.SSLError) as e:
            log_line(log, "failed %s" % type(e).__name__)

    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=one, args=(conn,), daemon=True).start()


def serve_trickle(lsock, log):
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"

    def one(conn):
        log_line(log, "connection")
        try:
            read_request(conn)
            for i in range(10**9):
                conn.sendall(answer[i % len(answer):i % len(answer) + 1] if i < len(answer) else b" ")
                time.sleep(1)
        except OSError:
            pass
        finally:
            conn.close()

    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=one, args=(conn,), daemon=True).start()


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mode, portfile, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    write_port(portfile, lsock.getsockname()[1])
    if mode == "proxy":
        serve_proxy(lsock, args[0], args[1])
    elif mode == "tls":
        serve_tls(lsock, args[0], args[1], args[2])
    elif mode == "trickle":
        serve_trickle(lsock, args[0])
    else:
        sys.exit("unknown mode %r" % mode)


if __name__ == "__main__":
    main()
