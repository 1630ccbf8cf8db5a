"""A small StatefulSet member for e2e tests (run by the process kubelet as image skein-e2e/peer).

Keeps an id in /data/id (written once: it identifies the volume), answers every TCP connection on
port 7000 with "<hostname> <id> <pod ip>", and every second tries to reach each peer by its DNS name
(<statefulset>-<i>.<service>.<namespace>.svc.cluster.local), logging "reached NAME -> ANSWER" or
"unreachable NAME: ERROR". Env: PEERS (count), SERVICE, STATEFULSET, POD_NAMESPACE, POD_IP.
"""
import os
import socket
import socketserver
import sys
import threading
import time
import uuid

DATA = "/data/id"
if not os.path.exists(DATA):
    with open(DATA, "w") as f:
        f.write(uuid.uuid4().hex)
with open(DATA) as f:
    VOLUME_ID = f.read().strip()
HOSTNAME = socket.gethostname()
ANSWER = f"{HOSTNAME} {VOLUME_ID} {os.environ.get('POD_IP', '?')}\n".encode()


class Answer(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(ANSWER)


def probe_peers():
    names = [f"{os.environ['STATEFULSET']}-{i}.{os.environ['SERVICE']}.{os.environ['POD_NAMESPACE']}.svc.cluster.local"
             for i in range(int(os.environ["PEERS"]))]
    while True:
        for name in names:
            try:
                with socket.create_connection((name, 7000), timeout=1) as s:
                    print(f"reached {name} -> {s.recv(200).decode().strip()}", flush=True)
            except OSError as e:
                print(f"unreachable {name}: {e}", flush=True)
        time.sleep(1)


socketserver.ThreadingTCPServer.allow_reuse_address = True
server = socketserver.ThreadingTCPServer(("0.0.0.0", 7000), Answer)
print(f"{HOSTNAME} serving volume {VOLUME_ID}", flush=True)
threading.Thread(target=probe_peers, daemon=True).start()
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
